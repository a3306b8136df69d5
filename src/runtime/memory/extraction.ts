/**
 * Memories read out of a conversation at a natural checkpoint (it went quiet, it was compacted, a person handed it back):
 * one model call over the part not read before, answering JSON in a schema. Never a call per turn.
 */
import * as z from "zod";
import { RuntimeError } from "../errors.ts";
import type { Message } from "../messages.ts";
import { type Memory, MEMORY_TYPES, type MemoryType } from "../ports/memory-port.ts";
import type { Model, ModelRequest } from "../ports/model-port.ts";
import { answerOf } from "../titles.ts";

/** The agent name an extraction call carries (logs, traces, and models that route by agent, as the demo does). */
export const MEMORY_AGENT = "memory-extraction";

/** What the model reads of each message at most: a long paste is not what a memory is made of. */
const MESSAGE_CHARS = 2_000;

const INSTRUCTIONS = [
  "You keep a customer's memory for a support team. Read the conversation below and list what is worth remembering about",
  "the user in later conversations: lasting facts (their orders, address, account), preferences (language, how to be",
  "contacted), instructions they gave for how to treat them, events, and tasks still open. Leave out small talk, what",
  "only the agents said, and anything secret (passwords, card numbers, keys). Each memory is one short sentence about the",
  'user ("Prefers to be written to in French"). Give each a `key`, the topic in one or two words ("language", "home',
  'address", "order"): a memory of a key already known replaces it. `message` is the number in brackets it came from.',
  'Answer with JSON only: {"memories":[{"text":"…","type":"fact|preference|event|instruction|task","key":"…","message":0}]},',
  'and {"memories":[]} when nothing is worth keeping.',
].join(" ");

/** One memory as the model answers it. */
export interface ExtractedMemory {
  text: string;
  type: MemoryType;
  key?: string | undefined;
  /** The index in the history of the message it came from. */
  message?: number | undefined;
}

const ExtractedSchema = z.object({
  memories: z.array(
    z.object({
      text: z.string().min(1),
      type: z.enum(MEMORY_TYPES).catch("fact"),
      key: z.string().min(1).optional().catch(undefined),
      message: z.number().int().min(0).optional().catch(undefined),
    }),
  ),
});

/** What one read of a conversation found, and what its model call spent. */
export interface Extraction {
  memories: ExtractedMemory[];
  inputTokens: number;
  outputTokens: number;
}

/**
 * One call over the history from `from` on: what the user said and was answered, numbered by index, with what is known
 * already so the model does not repeat it. Throws `model_error` when the answer is not the JSON asked for.
 */
export async function extractMemories(
  model: Model,
  base: Pick<ModelRequest, "model" | "settings" | "signal">,
  history: readonly Message[],
  from: number,
  known: readonly Memory[],
): Promise<Extraction> {
  const transcript = transcriptOf(history, from);
  if (!transcript) return { memories: [], inputTokens: 0, outputTokens: 0 };
  const knownLines = known.map((m) => `- ${m.key ? `[${m.key}] ` : ""}${m.text}`).join("\n");
  const content = `${knownLines ? `Known already:\n${knownLines}\n\n` : ""}Conversation:\n${transcript}`;
  const request: ModelRequest = {
    ...base,
    agent: MEMORY_AGENT,
    instructions: INSTRUCTIONS,
    messages: [{ role: "user", content }],
    tools: [],
  };
  const { text, inputTokens, outputTokens } = await answerOf(model, request);
  const memories = parseExtraction(text).filter((m) => m.message === undefined || m.message >= from);
  return { memories, inputTokens, outputTokens };
}

/** The user's and the agents' words from `from` on, one line each: `[index] User: …`. */
export function transcriptOf(history: readonly Message[], from: number): string {
  const lines: string[] = [];
  for (const [index, message] of history.entries()) {
    if (index < from || (message.role !== "user" && message.role !== "assistant") || !message.content) continue;
    const who = message.role === "user" ? "User" : `Agent (${message.agent})`;
    lines.push(`[${index}] ${who}: ${message.content.slice(0, MESSAGE_CHARS)}`);
  }
  return lines.join("\n");
}

/** The JSON object in the answer (a model may wrap it in a code fence), checked. */
export function parseExtraction(text: string): ExtractedMemory[] {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  let parsed: unknown;
  try {
    parsed = start >= 0 && end > start ? JSON.parse(text.slice(start, end + 1)) : undefined;
  } catch {
    parsed = undefined;
  }
  const checked = ExtractedSchema.safeParse(parsed);
  if (!checked.success) throw new RuntimeError("model_error", "The memory extraction did not answer the JSON it was asked for.");
  return checked.data.memories;
}
