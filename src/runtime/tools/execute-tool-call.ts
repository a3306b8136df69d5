import * as z from "zod";
import type { FileRef, ToolCall, ToolMessage } from "../messages.ts";
import type { CallContext, Tool, ToolContext } from "./tool.ts";
import { errorMessage } from "../errors.ts";
import { callAsks, type InputAsk } from "../wait/asks.ts";

/** A tool call's answer: `result` goes on the event, `content` to the model. */
export interface ToolOutcome {
  result: unknown;
  content: string;
  isError: boolean;
  /** Files the call saved. */
  files?: FileRef[];
}

export function errorOutcome(message: string): ToolOutcome {
  return { result: message, content: message, isError: true };
}

export type ParsedArguments = { ok: true; value: unknown } | { ok: false; message: string };

/** Parses a call's raw JSON arguments; an empty string is no arguments. */
export function parseArguments(raw: string): ParsedArguments {
  try {
    return { ok: true, value: raw.trim() === "" ? {} : JSON.parse(raw) };
  } catch (error) {
    return { ok: false, message: `Arguments are not valid JSON: ${(error as Error).message}` };
  }
}

/**
 * A call stopped on an ask that has no answer yet: it waits for the user, and runs again with `answers` and the one to
 * come, and what it remembered (`recorded`) given back.
 */
export interface AskedOutcome {
  asked: InputAsk;
  answers: readonly unknown[];
  recorded: readonly unknown[];
}

/**
 * Runs one call, its earlier asks answered from `answers` and what it remembered given back from `recorded`. Every
 * failure becomes an error outcome the model sees; nothing is thrown. An ask with no answer yet stops it: the outcome says
 * what it asked.
 */
export async function executeToolCall(
  call: ToolCall,
  tool: Tool | undefined,
  ctx: CallContext,
  availableTools: readonly string[],
  answers: readonly unknown[] = [],
  recorded: readonly unknown[] = [],
): Promise<ToolOutcome | AskedOutcome> {
  if (!tool) {
    return errorOutcome(`Unknown tool '${call.name}'. Available tools: ${availableTools.join(", ") || "none"}.`);
  }
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) return errorOutcome(parsed.message);
  const validated = tool.parameters.safeParse(parsed.value);
  if (!validated.success) {
    return errorOutcome(`Invalid arguments for '${tool.name}': ${z.prettifyError(validated.error)}`);
  }
  if (!tool.execute) return errorOutcome(`Tool '${tool.name}' runs on the user's side: it has no answer here.`);
  const asks = callAsks(answers, recorded);
  const saved: FileRef[] = [];
  try {
    const context: ToolContext = {
      ...ctx,
      toolCallId: call.id,
      idempotencyKey: `${ctx.conversationId}:${call.id}`,
      schedule: (request) => ctx.schedule(request, call.id),
      delegate: (agent, request) => ctx.delegate(agent, request, call.id, asks),
      delegateInBackground: (agent, request) => ctx.delegateInBackground(agent, request, call.id),
      ask: (question) => asks.ask(question),
      elicit: (request) => asks.elicit(request),
      remember: (run) => asks.remember(run),
      files: { read: ctx.files.read, save: async (file) => keep(saved, await ctx.files.save(file)) },
    };
    const result: unknown = await tool.execute(validated.data, context);
    // An ask the tool caught still stops the call: its answer is what the call is waiting for.
    if (asks.pending) return { asked: asks.pending, answers, recorded: asks.recorded };
    const content = typeof result === "string" ? result : JSON.stringify(result ?? null);
    return { result: result ?? null, content, isError: false, ...(saved.length ? { files: saved } : {}) };
  } catch (error) {
    if (asks.pending) return { asked: asks.pending, answers, recorded: asks.recorded };
    return errorOutcome(`Tool '${tool.name}' failed: ${errorMessage(error)}`);
  }
}

export function isAsked(outcome: ToolOutcome | AskedOutcome): outcome is AskedOutcome {
  return "asked" in outcome;
}

function keep(saved: FileRef[], file: FileRef): FileRef {
  saved.push(file);
  return file;
}

/** The history's record of a call's answer. */
export function toolMessage(call: ToolCall, outcome: ToolOutcome): ToolMessage {
  const files = outcome.files?.length ? { files: outcome.files } : {};
  return { role: "tool", toolCallId: call.id, name: call.name, content: outcome.content, isError: outcome.isError, ...files };
}

/** A call's arguments as events show them: parsed when they parse, else the raw text. */
export function argsOf(call: ToolCall): unknown {
  const parsed = parseArguments(call.arguments);
  return parsed.ok ? parsed.value : call.arguments;
}
