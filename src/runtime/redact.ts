/**
 * Redaction by value: the configured secrets themselves are replaced wherever they appear,
 * whatever their format, rather than strings that merely look like keys.
 */
import type { DelegatedEvent } from "./events.ts";

export const REDACTED = "[redacted]";

/** Shorter values are not redacted: a secret that short would match ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** Replaces configured secret values (raw, JSON-escaped and URL-encoded) in text and in JSON values. */
export class Redactor {
  /** Each secret and the forms it takes once escaped in JSON or a URL, longest first. */
  readonly #needles: readonly string[];

  readonly #secrets: readonly string[];

  constructor(secrets: Iterable<string>) {
    this.#secrets = [...secrets];
    const needles = new Set<string>();
    for (const secret of this.#secrets) {
      if (secret.length < MIN_SECRET_LENGTH) continue;
      needles.add(secret);
      needles.add(JSON.stringify(secret).slice(1, -1));
      needles.add(encodeURIComponent(secret));
    }
    this.#needles = [...needles].sort((a, b) => b.length - a.length);
  }
  /** This redactor and more secrets. */
  with(secrets: Iterable<string>): Redactor {
    const more = [...secrets];
    return more.length === 0 ? this : new Redactor([...this.#secrets, ...more]);
  }

  get empty(): boolean {
    return this.#needles.length === 0;
  }

  text(text: string): string {
    let out = text;
    for (const needle of this.#needles) if (out.includes(needle)) out = out.replaceAll(needle, REDACTED);
    return out;
  }

  /** A copy of a JSON value with every string redacted; the value itself when nothing needed it. */
  value<T>(value: T): T {
    return this.empty ? value : (this.#walk(value) as T);
  }

  /**
   * How many characters at the end of `text` could begin a secret that the next chunk completes:
   * a stream holds them back until it knows.
   */
  pendingPrefix(text: string): number {
    let longest = 0;
    for (const needle of this.#needles) {
      for (let n = Math.min(needle.length - 1, text.length); n > longest; n--) {
        if (text.charCodeAt(text.length - n) === needle.charCodeAt(0) && text.endsWith(needle.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }

  #walk(value: unknown): unknown {
    if (typeof value === "string") return this.text(value);
    if (Array.isArray(value)) {
      const items = value.map((item) => this.#walk(item));
      return items.some((item, i) => item !== value[i]) ? items : value;
    }
    if (value !== null && typeof value === "object") {
      let changed = false;
      const entries = Object.entries(value).map(([key, item]) => {
        const walked = this.#walk(item);
        if (walked !== item) changed = true;
        return [key, walked] as const;
      });
      return changed ? Object.fromEntries(entries) : value;
    }
    return value;
  }
}

/**
 * Redacts a stream of text chunks: a chunk's tail that could be the start of a secret is held
 * until the next chunk shows whether it is one, so a secret split across chunks is still caught.
 */
export class StreamingRedaction {
  readonly #redactor: Redactor;
  #held = "";

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  /** The part of `chunk` (with what was held) that is safe to send now. */
  push(chunk: string): string {
    if (this.#redactor.empty) return chunk;
    const text = this.#redactor.text(this.#held + chunk);
    const hold = this.#redactor.pendingPrefix(text);
    this.#held = text.slice(text.length - hold);
    return text.slice(0, text.length - hold);
  }

  /** What is still held, at the end of the text. */
  flush(): string {
    const rest = this.#held;
    this.#held = "";
    return rest;
  }
}

/**
 * Delegated runs' text, redacted as a stream per run (`path`), as a turn's own text is: a secret split across a delegated
 * agent's deltas is caught too. Each run's held text comes out before its next other event, and at `flush`.
 */
export class NestedRedaction {
  readonly #redactor: Redactor;
  readonly #runs = new Map<string, { stream: StreamingRedaction; agent: string; path: string[] }>();

  constructor(redactor: Redactor) {
    this.#redactor = redactor;
  }

  /** What to send for a delegated event, redacted: its text as far as it is safe, or its run's held text and then the event. */
  take(event: DelegatedEvent): DelegatedEvent[] {
    const key = event.path.join("/");
    if (event.event.type !== "text-delta") return [...this.flush(key), this.#redactor.value(event)];
    const run = this.#runs.get(key) ?? { stream: new StreamingRedaction(this.#redactor), agent: event.agent, path: [...event.path] };
    this.#runs.set(key, { ...run, agent: event.agent });
    const delta = run.stream.push(event.event.delta);
    return delta ? [{ ...event, event: { type: "text-delta", delta } }] : [];
  }

  /** The text held for the run at `key` (every run's, without one), as text deltas. */
  flush(key?: string): DelegatedEvent[] {
    const keys = key === undefined ? [...this.#runs.keys()] : [key];
    return keys.flatMap((k) => {
      const run = this.#runs.get(k);
      this.#runs.delete(k);
      const delta = run?.stream.flush();
      return run && delta
        ? [{ type: "delegated" as const, path: run.path, agent: run.agent, event: { type: "text-delta" as const, delta } }]
        : [];
    });
  }
}
