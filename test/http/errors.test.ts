/**
 * One error family: the loop's, the HTTP API's, the configuration's and A2A's errors are each a
 * `HandoffError` with a literal code, a cause and details, and the edges map codes by one table each
 * (HTTP statuses, A2A's JSON-RPC codes).
 */
import { describe, expect, it } from "vitest";
import { RPC_ERROR } from "../../src/a2a/a2a-wire.ts";
import { ConfigError, readConfig } from "../../src/config.ts";
import { RpcFailure } from "../../src/a2a/server/rpc.ts";
import { HTTP_ERROR_STATUS, HttpError } from "../../src/http/errors.ts";
import { A2A_RPC_ERROR } from "../../src/a2a/server/rpc-errors.ts";
import { HandoffError, RuntimeError } from "../../src/runtime/errors.ts";

describe("one error family", () => {
  it("has one base class: each kind is a HandoffError with its code, cause and details, and says itself as a value", () => {
    const cause = new Error("disk busy");
    const failures: HandoffError[] = [
      new RuntimeError("model_timeout", "The model stream stalled.", { cause }),
      new HttpError("rate_limited", "Slow down.", { retryAfter: 3 }),
      new RpcFailure("invalidParams", "Name the task.", { field: "id" }),
    ];
    for (const failure of failures) expect(failure).toBeInstanceOf(HandoffError);
    expect(failures.map((f) => f.toValue())).toEqual([
      { code: "model_timeout", message: "The model stream stalled." },
      { code: "rate_limited", message: "Slow down.", details: { retryAfter: 3 } },
      { code: "invalidParams", message: "Name the task.", details: { field: "id" } },
    ]);
    expect(failures[0]!.cause).toBe(cause);
    expect((failures[2] as RpcFailure).rpcCode).toBe(-32602);
  });

  it("a configuration that does not parse is a ConfigError of the family, coded invalid_configuration", () => {
    let thrown: unknown;
    try {
      readConfig({ MAX_MESSAGE_CHARS: "lots" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toBeInstanceOf(HandoffError);
    expect((thrown as ConfigError).code).toBe("invalid_configuration");
  });

  it("maps every HTTP error code to one A2A JSON-RPC code, from one table", () => {
    expect(Object.keys(A2A_RPC_ERROR).sort()).toEqual(Object.keys(HTTP_ERROR_STATUS).sort());
    for (const rpc of Object.values(A2A_RPC_ERROR)) expect(Object.keys(RPC_ERROR)).toContain(rpc);
    expect([A2A_RPC_ERROR.conversation_not_found, A2A_RPC_ERROR.internal_error, A2A_RPC_ERROR.run_in_progress]).toEqual([
      "taskNotFound",
      "internalError",
      "invalidRequest",
    ]);
  });
});
