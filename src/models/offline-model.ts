import type { Model, ModelEvent, ModelRequest } from "../runtime/ports/model-port.ts";
import { TITLE_AGENT } from "../runtime/titles.ts";
import type { ToolCall, ToolMessage } from "../runtime/messages.ts";
import type { ToolSpec } from "../runtime/tools/tool.ts";

/**
 * A stand-in for a model while a team develops its own Worker offline (`OFFLINE_MODEL=true` in
 * `.dev.vars`): it is no language model. It hands the conversation to an agent whose name the
 * user's message contains, calls a tool whose name it contains (string arguments are the message),
 * and otherwise says which agent holds the conversation and what it can do. Deterministic, and it
 * reads only the request, as a real model does, so handoffs, tools, approvals and returns run for real.
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
  const targets = request.tools.flatMap(targetsOf);
  return [
    `This is ${request.agent}, answered by the offline model (not a real model).`,
    tools.length ? `Name a tool to call it: ${tools.join(", ")}.` : "",
    targets.length ? `Name an agent to be handed to it: ${targets.join(", ")}.` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** The agents a transfer tool reaches: one per tool (`per-target`), or the enum of `transfer_to_agent`. */
function targetsOf(spec: ToolSpec): string[] {
  const named = /^Transfer the conversation to '([^']+)'/.exec(spec.description)?.[1];
  if (named) return [named];
  const properties = spec.parameters.properties as Record<string, { enum?: unknown }> | undefined;
  const names = properties?.agent_name?.enum;
  return spec.name.startsWith("transfer_to_") && Array.isArray(names) ? names.map(String) : [];
}

function transferTo(tools: readonly ToolSpec[], words: readonly string[]): Decision | undefined {
  for (const spec of tools) {
    const target = targetsOf(spec).find((name) => mentions(words, name));
    if (!target) continue;
    const reason = `the message names ${target}`;
    return { name: spec.name, arguments: JSON.stringify(spec.name === "transfer_to_agent" ? { agent_name: target, reason } : { reason }) };
  }
  return undefined;
}

/** Every required argument from the message: strings are its words, numbers 1, booleans true. */
function argumentsFor(spec: ToolSpec, text: string): Record<string, unknown> {
  const properties = (spec.parameters.properties ?? {}) as Record<string, { type?: string }>;
  const required = (spec.parameters.required ?? []) as string[];
  const value = (type: string | undefined) => (type === "number" || type === "integer" ? 1 : type === "boolean" ? true : text);
  return Object.fromEntries(required.map((name) => [name, value(properties[name]?.type)]));
}

function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** A name is mentioned when each of its words is, a plural or a stem alike (`bookings`, `booking`). */
function mentions(words: readonly string[], name: string): boolean {
  const same = (a: string, b: string) => a === b || (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a)));
  return wordsOf(name).every((part) => words.some((word) => same(word, part)));
}
