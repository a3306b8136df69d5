import type { Model, ModelEvent, ModelRequest } from "../runtime/ports/model-port.ts";
import { TITLE_AGENT } from "../runtime/titles.ts";
import type { ToolCall, ToolMessage } from "../runtime/messages.ts";
import type { ToolSpec } from "../runtime/tools/tool.ts";

/**
 * A stand-in for a model while a team develops its own Worker offline (`OFFLINE_MODEL=true` in
 * `.dev.vars`): it is no language model. It hands the conversation to an agent whose name the
 * user's message contains, else to a person's agent when the message asks for a person or a human,
 * else to the agent whose description shares the most words with the message; it calls a tool whose
 * name the message contains (a string argument is the word after the parameter's name, else the
 * message), and otherwise says which agent holds the conversation and what it can do. Deterministic,
 * and it reads only the request, as a real model does, so handoffs, tools, approvals and returns run
 * for real.
 */
export class OfflineModel implements Model {
  readonly label = "offline model (not a real model: it matches words to agents and tools; set OPENAI_API_KEY for one)";

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const decision = decide(request);
    const usage = { inputTokens: 0, outputTokens: 0 };
    if (typeof decision === "string") {
      for (const word of decision.split(/(?<= )/)) yield { type: "text-delta", delta: word };
      yield { type: "finish", finishReason: "stop", usage };
      return;
    }
    yield { type: "tool-call", call: { id: `call_offline_${request.messages.length}`, ...decision } };
    yield { type: "finish", finishReason: "tool_calls", usage };
  }
}

type Decision = string | Omit<ToolCall, "id">;

function decide(request: ModelRequest): Decision {
  const lastUser = request.messages.findLast((m) => m.role === "user");
  const text = lastUser?.content ?? "";
  if (request.agent === TITLE_AGENT) return (/^User: (.*)$/m.exec(text)?.[1] ?? text).split(/\s+/).slice(0, 6).join(" ");
  const since = lastUser ? request.messages.slice(request.messages.lastIndexOf(lastUser) + 1) : [];
  const results = since.filter((m): m is ToolMessage => m.role === "tool");
  const words = wordsOf(text);
  // One move a message: once something ran since the user spoke, answer.
  if (results.length === 0) {
    const transfer = transferTo(request.tools, words);
    if (transfer) return transfer;
    const tool = request.tools.find((spec) => !spec.name.startsWith("transfer_to_") && mentions(words, spec.name));
    if (tool) return { name: tool.name, arguments: JSON.stringify(argumentsFor(tool, text)) };
  }
  const last = results.at(-1);
  if (last && !last.name.startsWith("transfer_to_")) return `${request.agent}: ${last.name} answered ${last.content.slice(0, 300)}`;
  const tools = request.tools.filter((spec) => !spec.name.startsWith("transfer_to_")).map((spec) => spec.name);
  const targets = request.tools.flatMap(targetsOf).map((target) => target.name);
  return [
    `This is ${request.agent}, answered by the offline model (not a real model).`,
    tools.length ? `Name a tool to call it: ${tools.join(", ")}.` : "",
    targets.length ? `Name an agent to be handed to it: ${targets.join(", ")}.` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** The agents a transfer tool reaches, with what its description says of each. */
function targetsOf(spec: ToolSpec): Target[] {
  const named = /^Transfer the conversation to '([^']+)'\.\s*(.*)$/s.exec(spec.description);
  if (named) return [{ name: named[1]!, about: named[2]! }];
  if (!spec.name.startsWith("transfer_to_") && spec.name !== "handoff") return [];
  // `single` and `named` list their targets one a line: "- name: description".
  return [...spec.description.matchAll(/^- ([^\s:]+):? ?(.*)$/gm)].map((m) => ({ name: m[1]!, about: m[2]! }));
}

interface Target {
  name: string;
  about: string;
}

const PERSON_WORDS = ["person", "human", "someone", "somebody", "people", "staff"];
// Words too common to say which agent a message is for.
const COMMON = new Set([
  "about",
  "could",
  "from",
  "have",
  "help",
  "like",
  "need",
  "please",
  "that",
  "there",
  "this",
  "want",
  "what",
  "when",
  "with",
  "would",
  "your",
]);

function transferTo(tools: readonly ToolSpec[], words: readonly string[]): Decision | undefined {
  const offered = tools.flatMap((spec) => targetsOf(spec).map((target) => ({ spec, target })));
  const byName = offered.find(({ target }) => mentions(words, target.name));
  if (byName) return transferCall(byName.spec, byName.target.name, `the message names ${byName.target.name}`);
  const asksForPerson = words.some((word) => PERSON_WORDS.includes(word));
  const person = asksForPerson && offered.find(({ target }) => wordsOf(target.about).some((word) => PERSON_WORDS.includes(word)));
  if (person) return transferCall(person.spec, person.target.name, "the message asks for a person");
  const meaningful = words.filter((word) => word.length >= 4 && !COMMON.has(word));
  const scored = offered.map((entry) => ({
    ...entry,
    score: meaningful.filter((word) => mentions(wordsOf(entry.target.about), word)).length,
  }));
  const best = scored.reduce<(typeof scored)[number] | undefined>(
    (top, entry) => (entry.score > (top?.score ?? 0) ? entry : top),
    undefined,
  );
  return best && transferCall(best.spec, best.target.name, `the message matches what ${best.target.name} is for`);
}

function transferCall(spec: ToolSpec, target: string, reason: string): Decision {
  const args =
    spec.name === "transfer_to_agent" ? { agent_name: target, reason } : spec.name === "handoff" ? { name: target, reason } : { reason };
  return { name: spec.name, arguments: JSON.stringify(args) };
}

/**
 * Every required argument from the message: a string is the word after the parameter's name
 * ("cancel booking B7" gives `bookingId` "B7"), else the whole message; numbers 1, booleans true.
 */
function argumentsFor(spec: ToolSpec, text: string): Record<string, unknown> {
  const properties = (spec.parameters.properties ?? {}) as Record<string, { type?: string }>;
  const required = (spec.parameters.required ?? []) as string[];
  const value = (name: string, type: string | undefined) =>
    type === "number" || type === "integer" ? 1 : type === "boolean" ? true : (wordAfter(text, name) ?? text);
  return Object.fromEntries(required.map((name) => [name, value(name, properties[name]?.type)]));
}

/** The message's word after a parameter's name: its whole name first (`booking id`), then each of its words. */
function wordAfter(text: string, parameter: string): string | undefined {
  const tokens = text
    .split(/\s+/)
    .map((token) => token.replace(/^["'(]+|[.,;:!?"')]+$/g, ""))
    .filter(Boolean);
  const keys = tokens.map((token) => wordsOf(token).join(" "));
  const nameWords = wordsOf(parameter.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/_/g, " "));
  for (const phrase of [nameWords, ...nameWords.map((word) => [word])]) {
    for (let i = 0; i + phrase.length < tokens.length; i++) {
      if (phrase.every((word, j) => keys[i + j] === word)) return tokens[i + phrase.length];
    }
  }
  return undefined;
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** A name is mentioned when each of its words is, a plural or a stem alike (`bookings`, `booking`). */
function mentions(words: readonly string[], name: string): boolean {
  const same = (a: string, b: string) => a === b || (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a)));
  return wordsOf(name).every((part) => words.some((word) => same(word, part)));
}
