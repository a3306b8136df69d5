/** What every A2A method shares: its JSON-RPC failure, its params read with zod, the conversation's client. */
import type { Context } from "hono";
import type * as z from "zod";
import type { AppEnv } from "../app-env.ts";
import { describeProblems } from "../request.ts";
import { originOf, type SessionClient, sessionClient } from "../session-client.ts";
import { RPC_ERROR } from "../../a2a/a2a-wire.ts";

/** A JSON-RPC error a method answers with. */
export class RpcFailure extends Error {
  readonly code: number;
  readonly data: Record<string, unknown> | undefined;
  constructor(code: number, message: string, data?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

export function parsed<T>(schema: z.ZodType<T>, params: unknown): T {
  const result = schema.safeParse(params);
  if (!result.success) throw new RpcFailure(RPC_ERROR.invalidParams, describeProblems(result.error));
  return result.data;
}

export function clientOf(c: Context<AppEnv>, conversationId: string): SessionClient {
  return sessionClient(c.env, conversationId, c.get("access"), originOf(c.req));
}
