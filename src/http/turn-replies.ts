import type { Context } from "hono";
import type { DecisionOutcome } from "../conversation/index.ts";
import type { StreamFormat } from "../wire/index.ts";
import type { ConversationEnv } from "./app-env.ts";
import { streamResponse } from "./request.ts";
/** After decisions: the resumed turn's stream, or 202 with the calls still awaiting a decision. */
export function decisionReply(c: Context<ConversationEnv>, outcome: DecisionOutcome, format: StreamFormat): Response {
  return outcome.kind === "stream"
    ? streamResponse(outcome, format)
    : c.json({ status: "awaiting_approval", pending: outcome.pending }, 202);
}
