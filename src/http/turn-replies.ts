import type { Context } from "hono";
import { readConfig } from "../config.ts";
import type { DecisionOutcome } from "../session/index.ts";
import type { StreamFormat } from "../wire/index.ts";
import type { ConversationEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { limitClient, streamResponse } from "./request.ts";

/** A new message passes the length limit and the per-client limit before it reaches the conversation. */
export async function admitMessage(c: Context<ConversationEnv>, message: string): Promise<void> {
  const max = readConfig(c.env).MAX_MESSAGE_CHARS;
  if (message.length > max) throw new HttpError("message_too_long", `The message is ${message.length} characters; the limit is ${max}.`);
  await limitClient(c.env, c.req.header("cf-connecting-ip"));
}

/** After decisions: the resumed turn's stream, or 202 with the calls still awaiting a decision. */
export function decisionReply(c: Context<ConversationEnv>, outcome: DecisionOutcome, format: StreamFormat): Response {
  return outcome.kind === "stream"
    ? streamResponse(outcome.stream, format)
    : c.json({ status: "awaiting_approval", pending: outcome.pending }, 202);
}
