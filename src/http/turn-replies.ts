import type { Context } from "hono";
import type { DecisionOutcome } from "../conversation/index.ts";
import type { StreamFormat } from "../wire/index.ts";
import type { ConversationEnv } from "./app-env.ts";
import { streamResponse } from "./request.ts";
/**
 * After decisions: the resumed turn's stream, or 202 with the calls still awaiting a decision; for a background run's
 * requests, 202 with its id (it carries on from the alarm once none is pending; its result comes as a follow-up turn).
 */
export function decisionReply(c: Context<ConversationEnv>, outcome: DecisionOutcome, format: StreamFormat): Response {
  if (outcome.kind === "stream") return streamResponse(outcome, format, c.var.conversationId);
  if (outcome.kind === "background") return c.json({ status: "background", background: outcome.id, pending: outcome.pending }, 202);
  return c.json({ status: "awaiting_approval", pending: outcome.pending }, 202);
}
