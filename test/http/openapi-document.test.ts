/**
 * The OpenAPI document as a client generator reads it: valid OpenAPI 3.1 by the specification's
 * own JSON Schema (checked under Node: the validator compiles schemas to code, which workerd does
 * not run), every operation summarised and answered, every path parameter declared.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/http/openapi.ts";

interface Operation {
  summary?: string;
  parameters?: Array<{ name: string; in: string }>;
  responses?: Record<string, { description?: string }>;
}

const document = openApiDocument();
const paths = document.paths as Record<string, Record<string, Operation | Operation["parameters"]>>;
const operations = Object.entries(paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([key]) => key !== "parameters")
    .map(([method, operation]) => ({
      path,
      method,
      operation: operation as Operation,
      shared: (item.parameters ?? []) as Operation["parameters"],
    })),
);

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("summarises every operation and describes each of its answers", () => {
    expect(operations.length).toBeGreaterThan(20);
    for (const { path, method, operation } of operations) {
      expect(operation.summary?.trim(), `${method} ${path}`).toBeTruthy();
      const answers = Object.entries(operation.responses ?? {});
      expect(answers.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const [status, answer] of answers) expect(answer.description?.trim(), `${method} ${path} ${status}`).toBeTruthy();
    }
  });

  it("declares every parameter its paths name", () => {
    for (const { path, method, operation, shared } of operations) {
      const declared = [...(shared ?? []), ...(operation.parameters ?? [])].filter((p) => p.in === "path").map((p) => p.name);
      const named = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(declared.sort(), `${method} ${path}`).toEqual(named.sort());
    }
  });
});
