/** What every A2A method shares: its JSON-RPC failure, its params read with zod, the conversation's client. */
import type { Context } from "hono";
import type * as z from "zod";
import type { AppEnv } from "../../http/app-env.ts";
import { describeProblems } from "../../http/request.ts";
import { originOf, type ConversationClient, conversationClient } from "../../http/conversation-client.ts";
import { RPC_ERROR } from "../a2a-wire.ts";
import { HandoffError } from "../../runtime/errors.ts";

/** A JSON-RPC error a method answers with: one of the error family, its code one of `RPC_ERROR`'s names. */
export class RpcFailure extends HandoffError<keyof typeof RPC_ERROR> {
  override readonly name = "RpcFailure";

  constructor(code: keyof typeof RPC_ERROR, message: string, data?: Record<string, unknown>) {
    super(code, message, { details: data });
  }

  /** The JSON-RPC error code the answer carries. */
  get rpcCode(): number {
    return RPC_ERROR[this.code];
  }
}

export function parsed<T>(schema: z.ZodType<T>, params: unknown): T {
  const result = schema.safeParse(params);
  if (!result.success) throw new RpcFailure("invalidParams", describeProblems(result.error));
  return result.data;
}

export function clientOf(c: Context<AppEnv>, conversationId: string): ConversationClient {
  return conversationClient(c.env, conversationId, c.get("access"), originOf(c.req));
}
