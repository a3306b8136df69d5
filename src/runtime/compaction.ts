import type { FileRef, Message } from "./messages.ts";
import type { Model, ModelRequest } from "./ports/model-port.ts";
import type { ToolSpec } from "./tools/tool.ts";

/** A compaction: the first `replaces` stored messages are sent to the model as `summary`. */
export interface Compaction {
  replaces: number;
  summary: string;
}

/** When and how older turns are summarized in what the model is sent (the stored history keeps them). */
export interface CompactionOptions {
  /** Token budget of a request for agents that set none. */
  contextBudget?: number;
  /** Turns kept verbatim after a compaction (default 4). */
  keepTurns?: number;
  /** The model that writes summaries; the active agent's model when unset. */
  summarizeModel?: string;
}

const SUMMARY_INSTRUCTIONS =
  "Summarize the conversation so far for the agent that continues it: who the user is, what they asked, what was decided, every fact, id and amount that may matter later, and what is still open. Be brief and factual.";

/** A cheap token estimate: about four characters a token, over what the request serializes to. */
export function estimateTokens(instructions: string, messages: readonly Message[], tools: readonly ToolSpec[]): number {
  let chars = instructions.length + JSON.stringify(tools).length;
  for (const message of messages)
    chars += (message.content?.length ?? 0) + (message.role === "assistant" ? JSON.stringify(message.toolCalls ?? []).length : 0) + 16;
  return Math.ceil(chars / 4);
}

/** What the model is sent: the summary in place of the messages it replaces. */
export function compactedView(history: readonly Message[], compaction: Compaction | undefined): readonly Message[] {
  if (!compaction) return history;
  return [
    { role: "system", agent: "compaction", content: `Summary of the earlier conversation: ${compaction.summary}` },
    ...history.slice(compaction.replaces),
  ];
}

/**
 * Where the kept part starts: the start of the `keepTurns`-th last turn, so a tool call and its
 * result are never separated. Falls back to fewer turns when the kept part alone is too big.
 */
export function chooseCut(history: readonly Message[], keepTurns: number, fits: (cut: number) => boolean): number {
  const turnStarts = history.flatMap((m, i) => (m.role === "user" ? [i] : []));
  for (let keep = Math.min(keepTurns, turnStarts.length); keep >= 1; keep--) {
    const cut = turnStarts[turnStarts.length - keep]!;
    if (fits(cut) || keep === 1) return cut;
  }
  return 0;
}

/**
 * Summarizes `messages` on top of an earlier summary, in chunks that each fit `chunkTokens`,
 * cut at turn starts. Each chunk is one model call with no tools.
 */
export async function summarize(
  model: Model,
  base: Omit<ModelRequest, "instructions" | "messages" | "tools">,
  previous: string | undefined,
  messages: readonly Message[],
  chunkTokens: number,
): Promise<{ summary: string; calls: number; inputTokens: number; outputTokens: number }> {
  let summary = previous;
  let calls = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const chunk of chunkAtTurns(messages, chunkTokens)) {
    // A cancel stops the summary between its calls.
    base.signal.throwIfAborted();
    const request: ModelRequest = {
      ...base,
      instructions: SUMMARY_INSTRUCTIONS,
      messages: [
        ...(summary ? [{ role: "system" as const, agent: "compaction", content: `Summary so far: ${summary}` }] : []),
        ...asTranscript(chunk),
      ],
      tools: [],
    };
    let text = "";
    for await (const event of model.stream(request)) {
      if (event.type === "text-delta") text += event.delta;
      if (event.type === "finish") {
        inputTokens += event.usage?.inputTokens ?? 0;
        outputTokens += event.usage?.outputTokens ?? 0;
      }
    }
    calls++;
    summary = text.trim() || summary;
  }
  return { summary: summary ?? "", calls, inputTokens, outputTokens };
}

/** A user's files in the transcript, by name: the summary keeps that they were sent; the stored message keeps their references. */
function namedFiles(files: readonly FileRef[] | undefined): string {
  return files?.length ? ` [sent ${files.map((file) => `"${file.name}" (${file.mediaType})`).join(", ")}]` : "";
}

/** Turns tool traffic into plain text, so the summary call needs no tools and no call pairing. */
function asTranscript(messages: readonly Message[]): Message[] {
  const lines = messages.map((m) => {
    switch (m.role) {
      case "user":
        return `User: ${m.content}${namedFiles(m.files)}`;
      case "assistant":
        return `${m.agent}: ${m.content ?? ""}${m.toolCalls?.length ? ` [called ${m.toolCalls.map((c) => `${c.name}(${c.arguments})`).join(", ")}]` : ""}`;
      case "tool":
        return `Result of ${m.name}${m.isError ? " (error)" : ""}: ${m.content}`;
      case "system":
        return `Note: ${m.content}`;
      default: {
        const exhaustive: never = m;
        return String(exhaustive);
      }
    }
  });
  return [{ role: "user", content: `Conversation to summarize:\n${lines.join("\n")}` }];
}

function chunkAtTurns(messages: readonly Message[], chunkTokens: number): Message[][] {
  const chunks: Message[][] = [];
  let current: Message[] = [];
  let size = 0;
  for (const message of messages) {
    const tokens = estimateTokens("", [message], []);
    if (message.role === "user" && current.length > 0 && size + tokens > chunkTokens) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += tokens;
  }
  if (current.length) chunks.push(current);
  return chunks;
}
