import type { FileRef } from "../runtime/messages.ts";
import type { StoredEvent } from "./sse.ts";
import type { EventEncoder } from "./turn-encoding.ts";
import { handoffPartId, requestPartId } from "./ui-messages.ts";

/** The AI SDK UI message stream protocol's response headers (v1). */
export const UI_MESSAGE_STREAM_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
} as const;

type Chunk = Record<string, unknown> & { type: string };

/**
 * Encodes a turn's events as the AI SDK UI message stream, so `useChat` talks to a conversation
 * directly. Only the base fields of each chunk are sent. A file a tool saved is a `file` chunk after its result, with its
 * URL on the conversation's file route. The `tool-approval-request` chunk exists
 * from AI SDK 6 on: a client on AI SDK 5 reads every other chunk but rejects that one.
 */
export class UIMessageEncoder implements EventEncoder {
  #openText: string | null = null;
  readonly #messageId: string | undefined;
  /** Where the client reads a file a tool saved (its `file` chunk's URL); without it, no file chunks. */
  readonly #fileUrl: ((file: FileRef) => string) | undefined;
  /** Each delegation's progress so far, by its path: one `data-delegation` part the page redraws as it grows. */
  readonly #delegations = new Map<string, DelegationProgress>();

  /** `messageId` goes on `start`, so a resumed leg continues the same message, and a reload finds it under that id. */
  constructor(messageId?: string, fileUrl?: (file: FileRef) => string) {
    this.#messageId = messageId;
    this.#fileUrl = fileUrl;
  }

  encode(event: StoredEvent): string {
    return frames(this.#chunks(event));
  }

  end(): string {
    return "data: [DONE]\n\n";
  }

  fail(message: string): string {
    const out: Chunk[] = [];
    this.#closeText(out);
    out.push({ type: "error", errorText: `stream_interrupted: ${message}` });
    return frames(out) + this.end();
  }

  #closeText(out: Chunk[]): void {
    if (this.#openText) out.push({ type: "text-end", id: this.#openText });
    this.#openText = null;
  }

  /**
   * A delegated agent's work as tool progress: one `data-delegation` part per delegation (its id the path of calls), sent
   * again whole as it grows (the AI SDK replaces a data part of the same id), with its agent, text, calls and status.
   */
  #delegation(event: Extract<StoredEvent, { type: "delegated" }>): Chunk {
    const id = event.path.join("/");
    const progress = this.#delegations.get(id) ?? { path: event.path, agent: event.agent, status: "running", text: "", calls: [] };
    this.#delegations.set(id, progress);
    progress.agent = event.agent;
    const inner = event.event;
    if (inner.type === "text-delta") progress.text += inner.delta;
    else if (inner.type === "tool-call") progress.calls.push({ toolCallId: inner.toolCallId, name: inner.name, args: inner.args });
    else if (inner.type === "tool-result") {
      // A call made before the leg resumed (one that waited for approval) comes with its result alone.
      const call = progress.calls.find((c) => c.toolCallId === inner.toolCallId);
      const result = { result: inner.result, isError: inner.isError };
      if (call) Object.assign(call, result);
      else progress.calls.push({ toolCallId: inner.toolCallId, name: inner.name, args: undefined, ...result });
    } else if (inner.type === "done") progress.status = inner.status === "completed" ? "done" : inner.status;
    else if (inner.type === "error") progress.status = "failed";
    return { type: "data-delegation", id: `delegation-${id}`, data: progress };
  }

  /** A file the call saved shows as it happens, as the stored history shows it after: a `file` chunk each. */
  #savedFiles(event: Extract<StoredEvent, { type: "tool-result" }>): Chunk[] {
    const url = this.#fileUrl;
    return url ? (event.files ?? []).map((file) => ({ type: "file", url: url(file), mediaType: file.mediaType })) : [];
  }

  #text(out: Chunk[], eventId: number, delta: string): void {
    if (!this.#openText) {
      this.#openText = `text-${eventId}`;
      out.push({ type: "text-start", id: this.#openText });
    }
    out.push({ type: "text-delta", id: this.#openText, delta });
  }

  #chunks(event: StoredEvent): Chunk[] {
    const out: Chunk[] = [];
    switch (event.type) {
      case "run-start":
        out.push(this.#messageId ? { type: "start", messageId: this.#messageId } : { type: "start" });
        break;
      case "step-start":
        out.push({ type: "start-step" });
        break;
      case "text-delta":
        this.#text(out, event.id, event.delta);
        break;
      case "tool-call":
        this.#closeText(out);
        out.push({ type: "tool-input-available", toolCallId: event.toolCallId, toolName: event.name, input: event.args });
        break;
      case "tool-result":
        out.push(toolResultChunk(event), ...this.#savedFiles(event));
        break;
      case "approval-required":
        out.push({ type: "tool-approval-request", approvalId: event.toolCallId, toolCallId: event.toolCallId });
        break;
      case "input-required":
      case "handoff":
        out.push(dataPart(event));
        break;
      case "delegated":
        out.push(this.#delegation(event));
        break;
      case "step-finish":
        this.#closeText(out);
        out.push({ type: "finish-step" });
        break;
      case "guardrail":
      case "compaction":
      case "memory":
      case "operator-message":
      case "warning":
        out.push(noteOf(event));
        break;
      case "done":
        this.#closeText(out);
        // A cancelled turn closes the message the way the AI SDK closes one its client aborted.
        out.push(event.status === "cancelled" ? { type: "abort", reason: "cancelled" } : { type: "finish" });
        break;
      case "error":
        this.#closeText(out);
        out.push({ type: "error", errorText: `${event.code}: ${event.message}` });
        break;
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown event ${JSON.stringify(exhaustive)}`);
      }
    }
    return out;
  }
}

/** An event that is a note beside the message's text, as a data part. */
function noteOf(event: Extract<StoredEvent, { type: "guardrail" | "compaction" | "memory" | "operator-message" | "warning" }>): Chunk {
  const { type, id: _id, ...data } = event;
  // What the user sees in the message stays with it; figures and warnings are passing.
  const shown = type === "guardrail" || type === "operator-message" || type === "memory";
  return { type: `data-${type}`, data, transient: !shown };
}

/** What the page is shown of a delegation as it runs. */
interface DelegationProgress {
  path: readonly string[];
  agent: string;
  status: string;
  text: string;
  calls: Array<{ toolCallId: string; name: string; args: unknown; result?: unknown; isError?: boolean }>;
}

/**
 * A handoff's `data-handoff` part, or a request's `data-request` part: the call stays input-available, and the page answers
 * it with addToolOutput, drawing it from this part. Their ids are the ones /ui-messages gives them.
 */
function dataPart(event: Extract<StoredEvent, { type: "input-required" | "handoff" }>): Chunk {
  if (event.type === "handoff") {
    const { type: _type, id, ...handoff } = event;
    return { type: "data-handoff", id: handoffPartId(handoff, id), data: handoff };
  }
  const { type: _type, id: _id, ...request } = event;
  return { type: "data-request", id: requestPartId(event.toolCallId), data: request };
}

/** Chunks as the protocol's SSE frames, one `data:` line each. */
function frames(chunks: Chunk[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("");
}

function toolResultChunk(event: Extract<StoredEvent, { type: "tool-result" }>): Chunk {
  // A declined call is the SDK's `output-denied` state, not an error.
  if (event.denied) return { type: "tool-output-denied", toolCallId: event.toolCallId };
  if (!event.isError) return { type: "tool-output-available", toolCallId: event.toolCallId, output: event.result };
  return {
    type: "tool-output-error",
    toolCallId: event.toolCallId,
    errorText: typeof event.result === "string" ? event.result : JSON.stringify(event.result),
  };
}
