import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { createApp } from "../../src/http/app.ts";
import { openApiDocument } from "../../src/http/openapi.ts";

/** Each route of the app as `METHOD /path`, with `:id` written as OpenAPI writes it (`{id}`). */
function routesOfApp(): string[] {
  const app = createApp(() => createSupportNetwork());
  const routes = app.routes
    .filter((r) => r.method !== "ALL" && r.path.startsWith("/v1/"))
    .map((r) => `${r.method} ${r.path.replace(/\/$/, "").replace(/:([A-Za-z]+)/g, "{$1}")}`);
  return [...new Set(routes)].sort();
}

function routesOfDocument(): string[] {
  const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
  return Object.entries(paths)
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((key) => key !== "parameters")
        .map((method) => `${method.toUpperCase()} ${path}`),
    )
    .sort();
}

describe("the OpenAPI document", () => {
  it("documents every route the app serves, with the same methods, and no route it does not serve", () => {
    const served = routesOfApp();
    const documented = routesOfDocument();
    expect(served.length).toBeGreaterThan(20);
    expect(
      documented.filter((r) => !served.includes(r)),
      "documented but not served",
    ).toEqual([]);
    expect(
      served.filter((r) => !documented.includes(r)),
      "served but not documented",
    ).toEqual([]);
  });
});
