import type { Context } from "hono";
import { readConfig } from "../config.ts";
import type { DecisionOutcome } from "../session/index.ts";
import type { StreamFormat } from "../wire/index.ts";
import type { ConversationEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { inboxOf } from "../session/inbox.ts";
import { limitClient, streamResponse } from "./request.ts";

/**
 * A new turn (its message, when it has one) passes the length limit, the per-client limit (by the
 * user's id when they signed in, else by address) and the user's daily token budget before it
 * reaches the conversation.
 */
export async function admitTurn(c: Context<ConversationEnv>, message?: string): Promise<void> {
  const config = readConfig(c.env);
  const max = config.MAX_MESSAGE_CHARS;
  if (message !== undefined && message.length > max)
    throw new HttpError("message_too_long", `The message is ${message.length} characters; the limit is ${max}.`);
  const access = c.get("access");
  const user = access.kind === "user" ? access.user.id : undefined;
  await limitClient(c.env, user ? `user:${user}` : `address:${c.req.header("cf-connecting-ip") ?? "local"}`);
  if (user && config.USER_DAILY_TOKENS) await withinDailyBudget(c, user, config.USER_DAILY_TOKENS);
}

/** The user's tokens today, across their conversations (their inbox counts them), against USER_DAILY_TOKENS. */
async function withinDailyBudget(c: Context<ConversationEnv>, user: string, budget: number): Promise<void> {
  const spent = (await (await inboxOf(c.env, user))?.tokensToday()) ?? 0;
  if (spent < budget) return;
  const midnight = new Date(new Date().toISOString().slice(0, 10));
  midnight.setUTCDate(midnight.getUTCDate() + 1);
  throw new HttpError(
    "user_budget_exhausted",
    `You have used ${spent} of your ${budget} tokens for today (UTC); new turns are accepted again from ${midnight.toISOString()}.`,
    { spent, budget, resetsAt: midnight.toISOString(), retryAfter: Math.ceil((midnight.getTime() - Date.now()) / 1000) },
  );
}

/** After decisions: the resumed turn's stream, or 202 with the calls still awaiting a decision. */
export function decisionReply(c: Context<ConversationEnv>, outcome: DecisionOutcome, format: StreamFormat): Response {
  return outcome.kind === "stream"
    ? streamResponse(outcome.stream, format)
    : c.json({ status: "awaiting_approval", pending: outcome.pending }, 202);
}
