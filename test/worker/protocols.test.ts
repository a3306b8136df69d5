/**
 * The protocols the repository's Worker is given (A2A and AG-UI), in workerd: each path is served by its protocol's own
 * handler, and its API paths are in the OpenAPI document. Its counterpart, a Worker given none: test/configured-remote/protocols.test.ts.
 */
import { describe, expect, it } from "vitest";
import { call } from "../support/worker.ts";

const json = { "content-type": "application/json" };

describe("a Worker given A2A and AG-UI", () => {
  it("serves each protocol's paths with the protocol's own answer, and documents them", async () => {
    const card = await call("/.well-known/agent-card.json");
    expect([card.status, ((await card.json()) as { name: string }).name]).toEqual([200, "triage"]);
    // A JSON-RPC request with no method: A2A's own refusal, in JSON-RPC's shape.
    const rpc = await call("/v1/a2a", { method: "POST", headers: json, body: JSON.stringify({ jsonrpc: "2.0", id: 1 }) });
    expect(await rpc.json()).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: expect.any(Number) } });
    // AG-UI's input with no thread: its own check names what is missing.
    const agUi = await call("/v1/ag-ui", { method: "POST", headers: json, body: "{}" });
    expect([agUi.status, ((await agUi.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_request"]);
    const { paths } = (await (await call("/v1/openapi.json")).json()) as { paths: Record<string, unknown> };
    // The card is A2A's discovery document, outside the API the document describes.
    expect(Object.keys(paths)).toEqual(expect.arrayContaining(["/v1/a2a", "/v1/ag-ui"]));
  });
});
