/**
 * `WorkerVars` (what a Worker's `env` is typed with) names every variable the configuration reads,
 * and nothing else: the two lists are compared by the type checker (`npm test` type-checks this
 * file), and the configuration reads each name from a plain environment.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { type Config, readConfig } from "../../src/config.ts";
import type { WorkerVars } from "../../src/worker-vars.ts";

describe("WorkerVars", () => {
  it("has exactly the configuration's variables", () => {
    expectTypeOf<Exclude<keyof Config, keyof WorkerVars>>().toEqualTypeOf<never>();
    expectTypeOf<Exclude<keyof WorkerVars, keyof Config>>().toEqualTypeOf<never>();
    // And the configuration reads them by those names: a value set under each is the one it holds.
    const config = readConfig({ ALLOW_ANONYMOUS: "true", USER_DAILY_TOKENS: "500", TITLE_MODEL: "off", AUTH_OPERATOR_ROLE: "desk" });
    expect([config.USER_DAILY_TOKENS, config.TITLE_MODEL, config.AUTH_OPERATOR_ROLE]).toEqual([500, "off", "desk"]);
  });
});
