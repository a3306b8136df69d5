/**
 * A signal to the app when a user is needed (NOTIFY_URL): a JSON body saying which conversation,
 * whose (when a signed-in user owns it) and why, signed with HMAC-SHA256 (NOTIFY_SECRET) as
 * `x-handoff-signature: t=<unix seconds>,v1=<hex of HMAC(secret, "<t>.<body>")>`. Never on a
 * turn's path: each notification is an entry of the conversation's schedule, delivered by the
 * alarm and retried with backoff (30 s, doubling, six attempts); a receiver dedupes by `id`.
 */
import type { Config } from "../../config.ts";
import type { Redactor } from "../../runtime/redact.ts";
import type { ConversationStore } from "../storage/conversation-store.ts";
import type { ScheduleEntry } from "./schedule.ts";

export type NotifyReason = "approval_waiting" | "approval_expired" | "person_answered" | "person_timed_out" | "follow_up_answered";

const ATTEMPTS = 6;
const FIRST_RETRY_MS = 30_000;
const DELIVERY_TIMEOUT_MS = 10_000;

type NotifyEntry = Extract<ScheduleEntry, { kind: "notify" }>;

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
      conversationId: state.conversationId,
      ...(state.owner ? { owner: state.owner } : {}),
      holder: state.holding.activeAgent,
      at: new Date().toISOString(),
      ...detail,
    });
    this.#store.schedule.add({ kind: "notify", dueAt: Date.now(), body: JSON.stringify(body), attempt: 0 });
  }

  /** One delivery attempt: done on a 2xx, else tried again later, until the attempts are spent. */
  async deliver(entry: NotifyEntry): Promise<void> {
    const url = this.#config.NOTIFY_URL;
    const { schedule } = this.#store;
    schedule.remove(entry.id);
    if (!url) return;
    const failure = await this.#post(url, entry.body);
    if (failure === null) return;
    if (entry.attempt + 1 >= ATTEMPTS) {
      this.#log(this.#redactor.text(`notification ${entry.id} to NOTIFY_URL given up after ${ATTEMPTS} attempts: ${failure}`));
      return;
    }
    schedule.add({ kind: "notify", dueAt: Date.now() + FIRST_RETRY_MS * 2 ** entry.attempt, body: entry.body, attempt: entry.attempt + 1 });
  }

  /** Null when delivered; else what went wrong. */
  async #post(url: string, body: string): Promise<string | null> {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = this.#config.NOTIFY_SECRET ? await sign(this.#config.NOTIFY_SECRET, `${timestamp}.${body}`) : null;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "handoff-runtime",
          ...(signature ? { "x-handoff-signature": `t=${timestamp},v1=${signature}` } : {}),
        },
        body,
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      });
      await res.body?.cancel();
      return res.ok ? null : `HTTP ${res.status}`;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }
}

async function sign(secret: string, payload: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload)));
  return [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
}
