/**
 * The protocols a Worker serves, in workerd (which CI runs first): this project's Worker is given none, so each protocol's
 * paths answer 404 `protocol_not_enabled` naming the option that serves it, and its OpenAPI document lists none of them;
 * the repository's Worker (given both) serves every one. The paths are written out here, not read from the code: a path
 * the code stops knowing fails this test.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/worker.ts";

const PATHS: Array<[path: string, init: RequestInit, option: string]> = [
  ["/.well-known/agent-card.json", {}, "a2a()"],
  ["/v1/a2a", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }, "a2a()"],
  ["/v1/ag-ui", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }, "agUi()"],
];

describe("a Worker given no protocols", () => {
  it("answers each protocol's paths 404 protocol_not_enabled, saying which option serves it, and documents none", async () => {
    for (const [path, init, option] of PATHS) {
      const res = await call(path, init);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect([res.status, error.code], path).toEqual([404, "protocol_not_enabled"]);
      expect(error.message, path).toContain(`\`protocols: [${option}]\``);
    }
    const { paths } = (await (await call("/v1/openapi.json")).json()) as { paths: Record<string, unknown> };
    for (const [path] of PATHS) expect(Object.keys(paths)).not.toContain(path);
    expect(Object.keys(paths)).toContain("/v1/conversations/{id}/messages");
  });
});
