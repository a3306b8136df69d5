/**
 * A signal to the app when a user is needed (NOTIFY_URL): a JSON body saying which conversation,
 * whose (when a signed-in user owns it) and why, signed with HMAC-SHA256 (NOTIFY_SECRET) as
 * `x-handoff-signature: t=<unix seconds>,v1=<hex of HMAC(secret, "<t>.<body>")>`. Never on a
 * turn's path: each notification is a message of the conversation's outbox, delivered by the
 * alarm and retried with backoff (30 s, doubling, six attempts), the same body and id each time;
 * a receiver dedupes by `id`. What a protocol's part sends (A2A's push notifications) takes the
 * same outbox to its own destination, with the headers it named, signed likewise.
 */
import type { Config } from "../../config.ts";
import type { Redactor } from "../../runtime/redact.ts";
import type { UserRequest } from "../../runtime/wait/requests.ts";
import type { ConversationStore } from "../storage/conversation-store.ts";
import type { Destination } from "../storage/outbox.ts";
import { errorMessage } from "../../runtime/errors.ts";

export type NotifyReason = "request_waiting" | "request_expired" | "person_answered" | "person_timed_out" | "follow_up_answered";

/** Reasons renamed for requests of every kind, and what they were called: the body says the old name in `alias` too. */
const REASON_ALIASES: Partial<Record<NotifyReason, string>> = { request_waiting: "approval_waiting", request_expired: "approval_expired" };

/** What the app is told of a request that waits (its arguments stay in the conversation). */
export function notifiedRequest({ kind, toolCallId, name, agent, expiresAt, delegated }: UserRequest) {
  return { kind, toolCallId, name, agent, expiresAt, ...(delegated ? { delegated } : {}) };
}

const ATTEMPTS = 6;
const FIRST_RETRY_MS = 30_000;
const DELIVERY_TIMEOUT_MS = 10_000;

export class Notifier {
  readonly #store: ConversationStore;
  readonly #config: Pick<Config, "NOTIFY_URL" | "NOTIFY_SECRET">;
  readonly #redactor: Redactor;
  readonly #log: (message: string) => void;

  constructor(
    store: ConversationStore,
    config: Pick<Config, "NOTIFY_URL" | "NOTIFY_SECRET">,
    redactor: Redactor,
    log: (message: string) => void,
  ) {
    this.#store = store;
    this.#config = config;
    this.#redactor = redactor;
    this.#log = log;
  }

  /** Queues a notification for the alarm to deliver; nothing when NOTIFY_URL is not set. */
  async notify(reason: NotifyReason, detail: Record<string, unknown> = {}): Promise<void> {
    const state = this.#store.state();
    if (!this.#config.NOTIFY_URL || !state) return;
    const body = this.#redactor.value({
      id: crypto.randomUUID(),
      reason,
      ...(REASON_ALIASES[reason] ? { alias: REASON_ALIASES[reason] } : {}),
      conversationId: state.conversationId,
      ...(state.owner ? { owner: state.owner } : {}),
      holder: state.holding.activeAgent,
      at: new Date().toISOString(),
      ...detail,
    });
    this.#store.outbox.add(body.id, JSON.stringify(body));
  }

  /** One delivery attempt of each message due: done on a 2xx, else tried again later, until the attempts are spent. */
  async deliverDue(): Promise<void> {
    const { outbox } = this.#store;
    for (const message of outbox.due()) {
      const url = message.target?.url ?? this.#config.NOTIFY_URL;
      if (!url) {
        outbox.remove(message.id);
        continue;
      }
      // The next try is set before this one starts: a process gone mid-delivery tries again then.
      outbox.attempt(message.id, Date.now() + FIRST_RETRY_MS * 2 ** message.attempt);
      const failure = await this.#post(url, message.body, message.target);
      if (failure === null) outbox.remove(message.id);
      else if (message.attempt + 1 >= ATTEMPTS) {
        const where = message.target ? "a protocol's destination" : "NOTIFY_URL";
        this.#log(this.#redactor.text(`notification ${message.id} to ${where} given up after ${ATTEMPTS} attempts: ${failure}`));
        outbox.remove(message.id);
      }
    }
  }

  /** Null when delivered; else what went wrong. A protocol's message carries the headers its destination names. */
  async #post(url: string, body: string, target?: Destination): Promise<string | null> {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = this.#config.NOTIFY_SECRET ? await sign(this.#config.NOTIFY_SECRET, `${timestamp}.${body}`) : null;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "handoff-runtime",
          ...(signature ? { "x-handoff-signature": `t=${timestamp},v1=${signature}` } : {}),
          ...target?.headers,
        },
        body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await res.body?.cancel();
      return res.ok ? null : `HTTP ${res.status}`;
    } catch (error) {
      return errorMessage(error);
    }
  }
}

async function sign(secret: string, payload: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}
