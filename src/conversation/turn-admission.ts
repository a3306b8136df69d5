/**
 * The one admission of a conversation: every way in (a message over HTTP, the AI SDK chat route,
 * retry and edit, decisions, socket frames, the alarm's scheduled turns, a person's message and
 * hand back) passes here, and nowhere else checks these, once and in one order: the requester's grant
 * and ownership, the conversation's state (running, waiting on approvals, held by a person), the
 * message length, the turn limits (the conversation's, then the client's by user id, else by
 * address; a scheduled turn has no client), the user's daily token budget, the stream caps.
 */
import type { Config } from "../config.ts";
import type { Network } from "../runtime/network.ts";
import type { Requester } from "./conversation-api.ts";
import type { ConversationState, ConversationStore } from "./storage/conversation-store.ts";
import { inboxOf } from "../inbox/inbox.ts";
import { fail, ok, type ConversationResult } from "./results.ts";
import type { TurnDriver } from "./turns/turn-driver.ts";

/**
 * How a turn starts, which decides the checks it gets: `message` (HTTP, the chat route, a socket
 * frame), `retry` (run again, or an edit with its new text), `resume` (decisions that complete a
 * suspended step), `scheduled` (the alarm's follow-ups and a person's deadline), `expiry` (the
 * alarm declines calls past their deadline and resumes), `person` (a person's answer or hand back: no model is called).
 */
export type TurnStart =
  | { kind: "message"; message: string; createOwned?: boolean }
  | { kind: "retry"; message?: string | undefined }
  | { kind: "resume" }
  | { kind: "scheduled" }
  | { kind: "expiry" }
  | { kind: "person" };

/** What a request needs of the conversation: that it exists (or may be created by it), and that no run is going on. */
export interface Need {
  /** No run may be going on. */
  idle?: boolean;
  /** The request may create the conversation (the master key, or anonymous use, with a first message). */
  orNew?: boolean;
  /** A signed-in user may create it too, as its owner (AG-UI's threads, which the client names). */
  userMayCreate?: boolean;
}

/** Which checks each way in gets, past the requester's access and the conversation's state. */
const CHECKS: Record<TurnStart["kind"], { clientLimit: boolean; budget: boolean; stream: boolean }> = {
  message: { clientLimit: true, budget: true, stream: true },
  retry: { clientLimit: true, budget: true, stream: true },
  resume: { clientLimit: true, budget: true, stream: true },
  // The alarm's turn spends its owner's tokens, and is read by no request.
  scheduled: { clientLimit: false, budget: true, stream: false },
  // Settling calls past their deadline is never held back: the turn would wait on decisions no one can make any more.
  expiry: { clientLimit: false, budget: false, stream: false },
  person: { clientLimit: false, budget: false, stream: false },
};

/** The one wording of a refusal while a turn runs. */
export const RUN_IN_PROGRESS = "A run is in progress for this conversation; wait for it to end, or cancel it.";

export interface AdmissionSetup {
  store: ConversationStore;
  driver: TurnDriver;
  network: Network;
  config: Pick<Config, "MAX_MESSAGE_CHARS" | "TURNS_PER_MINUTE" | "USER_DAILY_TOKENS" | "CLIENT_LIMIT">;
  /**
   * The Worker's bindings: the client limiter (`CLIENT_LIMITER`), the inboxes that count a user's tokens (`INBOXES`) and the desk a
   * network with people needs (`OPERATOR_DESK`).
   */
  env: unknown;
}

export class TurnAdmission {
  readonly #setup: AdmissionSetup;
  /** Start times of recent turns, for the per-conversation rate limit. */
  #recentTurns: number[] = [];

  constructor(setup: AdmissionSetup) {
    this.#setup = setup;
  }

  /**
   * Who may go on: a token passes while its grant is the conversation's (it never reaches a
   * conversation that does not exist); a signed-in user only into a conversation they own; the
   * conversation must exist unless the request may create it; and no run may be going on when
   * the request would start or change one.
   */
  access(requester: Requester, need: Need & { orNew: true }): ConversationResult<ConversationState | null>;
  access(requester: Requester, need?: Need): ConversationResult<ConversationState>;
  access(requester: Requester, need: Need = {}): ConversationResult<ConversationState | null> {
    const state = this.#setup.store.state();
    if (requester.grant !== undefined && (state?.grant === undefined || state.grant !== requester.grant))
      return fail(
        "token_revoked",
        "This conversation token was revoked: the conversation was deleted or its tokens were rotated. Ask for a new token.",
      );
    // Someone else's conversation is not found, as one that does not exist: ids cannot be probed. A user creates with POST, or
    // with a first message that asks to (AG-UI's).
    const creates = !state && need.orNew === true && (requester.user === undefined || need.userMayCreate === true);
    const owned = requester.user === undefined || creates || state?.owner === requester.user;
    if ((!state && !creates) || !owned) return fail("conversation_not_found", `No conversation '${requester.conversationId}'.`);
    if (need.idle && this.#setup.driver.running) return fail("run_in_progress", RUN_IN_PROGRESS);
    return ok(state);
  }

  /**
   * A turn of `start`'s kind, checked in the one order, then begun by `begin` with the state it
   * was admitted on. The client's limit and the budget are asked of other objects (awaited, so
   * another request may run meanwhile): the conversation's own checks are made again after them,
   * and `begin` runs in the same synchronous stretch, so two requests can never both start a turn.
   * `opensStream`: false for a leg no request reads (a socket's), which the stream cap does not hold back.
   */
  async turn<T>(
    requester: Requester,
    start: TurnStart,
    begin: (state: ConversationState | null) => ConversationResult<T> | Promise<ConversationResult<T>>,
    opensStream = true,
  ): Promise<ConversationResult<T>> {
    const first = this.#own(requester, start);
    if (!first.ok) return first;
    const unbound = this.#unbound();
    if (unbound) return unbound;
    const checks = CHECKS[start.kind];
    const starts = start.kind === "message" || start.kind === "retry";
    const limited =
      (starts ? this.#limitConversation() : null) ??
      (checks.clientLimit ? await this.#limitClient(requester) : null) ??
      (checks.budget ? await this.#withinBudget(requester.user ?? first.value?.owner) : null) ??
      (checks.stream && opensStream ? this.#setup.driver.limitStreams() : null);
    if (limited) return limited;
    const again = this.#own(requester, start);
    if (!again.ok) return again;
    if (starts) this.#recentTurns.push(Date.now());
    return begin(again.value);
  }

  /** The owner's daily budget, for what the alarm starts outside any turn (a background delegation): its refusal, or null. */
  ownerBudget(state: ConversationState): Promise<ConversationResult<never> | null> {
    return this.#withinBudget(state.owner);
  }

  /** The checks the conversation answers itself, without waiting: access, state, length. */
  #own(requester: Requester, start: TurnStart): ConversationResult<ConversationState | null> {
    const admitted = this.access(requester, {
      idle: true,
      orNew: start.kind === "message",
      userMayCreate: start.kind === "message" && start.createOwned === true,
    });
    if (!admitted.ok) return admitted;
    const held = this.#state(admitted.value, start);
    if (held) return held;
    const message = "message" in start ? start.message : undefined;
    const max = this.#setup.config.MAX_MESSAGE_CHARS;
    if (message !== undefined && message.length > max)
      return fail("message_too_long", `The message is ${message.length} characters; the limit is ${max}.`, {
        length: message.length,
        limit: max,
      });
    return admitted;
  }

  /**
   * The conversation's state against what `start` needs: no approvals waiting for a new message, a person holding it for a person's act.
   */
  #state(state: ConversationState | null, start: TurnStart): ConversationResult<never> | null {
    const suspension = state?.suspension;
    if (start.kind === "message" && suspension)
      return fail("request_pending", "Tool calls are waiting for the user (approvals or answers): decide them first.", {
        pending: suspension.pending.map((p) => p.toolCallId),
      });
    const holder = state?.holding.activeAgent ?? "";
    if (start.kind === "person" && !this.#setup.network.get(holder)?.human)
      return fail("not_held_by_person", `No person holds this conversation: '${holder}' does.`);
    return null;
  }

  #limitConversation(): ConversationResult<never> | null {
    const now = Date.now();
    const perMinute = this.#setup.config.TURNS_PER_MINUTE;
    this.#recentTurns = this.#recentTurns.filter((t) => t > now - 60_000);
    if (this.#recentTurns.length < perMinute) return null;
    const retryAfter = Math.max(1, Math.ceil((this.#recentTurns[0]! + 60_000 - now) / 1000));
    return fail("rate_limited", `This conversation takes ${perMinute} new turns a minute; try again in ${retryAfter} s.`, { retryAfter });
  }

  /**
   * A network with people needs the desk they find conversations on: without it a conversation handed to a person would wait unseen, so
   * every turn is refused, naming the binding.
   */
  #unbound(): ConversationResult<never> | null {
    if ((this.#setup.env as { OPERATOR_DESK?: unknown }).OPERATOR_DESK) return null;
    const people = [...this.#setup.network.agents.values()].filter((agent) => agent.human).map((agent) => agent.name);
    if (!people.length) return null;
    return fail(
      "invalid_configuration",
      `This network hands conversations to people (${people.join(", ")}) but this Worker binds no OPERATOR_DESK ` +
        "(the OperatorDesk Durable Object they find them on): bind it in wrangler.toml.",
    );
  }

  /**
   * New turns per client (a signed-in user's id, else the address), through the Workers rate-limiting binding. Without the binding
   * turns are refused (never silently unlimited) unless CLIENT_LIMIT=off says a rule in front of the Worker limits clients.
   */
  async #limitClient(requester: Requester): Promise<ConversationResult<never> | null> {
    const limiter = (this.#setup.env as { CLIENT_LIMITER?: { limit(o: { key: string }): Promise<{ success: boolean }> } }).CLIENT_LIMITER;
    if (!limiter && this.#setup.config.CLIENT_LIMIT === "off") return null;
    if (!limiter)
      return fail(
        "invalid_configuration",
        "This Worker binds no CLIENT_LIMITER (the rate-limiting binding that limits new turns per client): add a [[ratelimits]] " +
          'binding named CLIENT_LIMITER to wrangler.toml, or set CLIENT_LIMIT = "off" when a rule in front of the Worker limits clients.',
      );
    const key = requester.user ? `user:${requester.user}` : `address:${requester.address ?? "local"}`;
    const { success } = await limiter.limit({ key });
    return success ? null : fail("rate_limited", "Too many new turns from this client; try again in a minute.", { retryAfter: 60 });
  }

  /** The user's tokens today, across their conversations (their inbox counts them), against USER_DAILY_TOKENS. */
  async #withinBudget(user: string | undefined): Promise<ConversationResult<never> | null> {
    const budget = this.#setup.config.USER_DAILY_TOKENS;
    if (!user || !budget) return null;
    const inbox = await inboxOf(this.#setup.env, user);
    // The inboxes count what users spend: without them a budget would be silently unenforced, so it fails closed.
    if (!inbox)
      return fail(
        "invalid_configuration",
        "USER_DAILY_TOKENS is set but this Worker binds no INBOXES (the Inbox Durable Object, which counts a user's tokens): " +
          "bind it in wrangler.toml.",
      );
    const spent = await inbox.tokensToday();
    if (spent < budget) return null;
    const midnight = new Date(new Date().toISOString().slice(0, 10));
    midnight.setUTCDate(midnight.getUTCDate() + 1);
    return fail(
      "user_budget_exhausted",
      `You have used ${spent} of your ${budget} tokens for today (UTC); new turns are accepted again from ${midnight.toISOString()}.`,
      { spent, budget, resetsAt: midnight.toISOString(), retryAfter: Math.ceil((midnight.getTime() - Date.now()) / 1000) },
    );
  }
}
