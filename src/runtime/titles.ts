/**
 * A conversation's title, made by one small model call after its first turn: the user's first
 * message and the answer, as plain text, and no tools.
 */
import type { Message } from "./messages.ts";
import type { Model, ModelRequest } from "./ports/model-port.ts";

/** The agent name a title call carries (logs, traces, and models that route by agent, as the demo does). */
export const TITLE_AGENT = "conversation-title";

const TITLE_INSTRUCTIONS =
  "Write a title for this conversation of at most six words, in the user's language, naming what the user wants. Answer with the title only: no quotes, no full stop.";

/** Titles are cut to this many characters, whatever the model answers. */
export const TITLE_CHARS = 60;

export interface MadeTitle {
  title: string;
  inputTokens: number;
  outputTokens: number;
}

/** One call with the user's first message and the first answer; null when the model answers nothing usable. */
export async function makeTitle(
  model: Model,
  base: Pick<ModelRequest, "model" | "settings" | "signal">,
  messages: readonly Message[],
): Promise<MadeTitle | null> {
  const user = messages.find((m) => m.role === "user")?.content;
  if (!user) return null;
  const answer = messages.findLast((m) => m.role === "assistant" && m.content)?.content;
  const transcript = `User: ${user}${answer ? `\nAssistant: ${answer}` : ""}`;
  const request: ModelRequest = {
    ...base,
    agent: TITLE_AGENT,
    instructions: TITLE_INSTRUCTIONS,
    messages: [{ role: "user", content: transcript }],
    tools: [],
  };
  const { text, inputTokens, outputTokens } = await answerOf(model, request);
  const title = cleanTitle(text);
  return title ? { title, inputTokens, outputTokens } : null;
}

/** A call's whole answer as text, with what it spent: for the small calls beside a turn (a title, a memory read). */
export async function answerOf(model: Model, request: ModelRequest): Promise<{ text: string; inputTokens: number; outputTokens: number }> {
  let text = "";
  let inputTokens = 0;
  let outputTokens = 0;
  for await (const event of model.stream(request)) {
    if (event.type === "text-delta") text += event.delta;
    if (event.type === "finish") {
      inputTokens += event.usage?.inputTokens ?? 0;
      outputTokens += event.usage?.outputTokens ?? 0;
    }
  }
  return { text, inputTokens, outputTokens };
}

/** The first line, without quotes or a full stop, cut short. */
function cleanTitle(text: string): string {
  const line = (text.trim().split("\n")[0] ?? "")
    .trim()
    .replace(/^["'“”‘’]+|["'“”‘’.]+$/g, "")
    .trim();
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}
