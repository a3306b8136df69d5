import OpenAI from "openai";
import { inject } from "vitest";
import { OpenAIModel } from "../../src/models/index.ts";
import { type Message, type ModelEvent, type ModelRequest, RuntimeError } from "../../src/runtime/index.ts";
import type { ModelSettings } from "../../src/runtime/ports/model-port.ts";
import type { ToolSpec } from "../../src/runtime/tools/tool.ts";

export interface StepResult {
  text: string;
  deltas: number;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finish?: Extract<ModelEvent, { type: "finish" }>;
  error?: RuntimeError;
}

/** The real `openai` client against the fake server, wrapped in this runtime's adapter. */
export function providerModel(
  options: {
    maxRetries?: number;
    idleTimeoutMs?: number;
    defaults?: ModelSettings;
    apiKey?: string;
    baseURL?: string;
    log?: (line: string) => void;
  } = {},
): OpenAIModel {
  const client = new OpenAI({
    apiKey: options.apiKey ?? "sk-test-secret-key-never-shown",
    baseURL: options.baseURL ?? `${inject("fakeOpenAIUrl")}/v1`,
    maxRetries: options.maxRetries ?? 0,
  });
  return new OpenAIModel(client, {
    idleTimeoutMs: options.idleTimeoutMs ?? 10_000,
    ...options.defaults,
    ...(options.log ? { log: options.log } : {}),
  });
}

/** Plays one model step and collects what the adapter yielded, or the error it threw. */
export async function step(
  model: OpenAIModel,
  scenarioTag: string,
  overrides: Partial<Omit<ModelRequest, "signal">> & { signal?: AbortSignal } = {},
): Promise<StepResult> {
  const messages: Message[] = [{ role: "user", content: scenarioTag }];
  const tools: ToolSpec[] = [
    { name: "weather", description: "Weather.", parameters: { type: "object", properties: { location: { type: "string" } } } },
  ];
  const result: StepResult = { text: "", deltas: 0, toolCalls: [] };
  try {
    for await (const event of model.stream({
      agent: "a",
      model: "gpt-test",
      instructions: "Be brief.",
      messages,
      tools,
      settings: {},
      signal: new AbortController().signal,
      ...overrides,
    })) {
      if (event.type === "text-delta") {
        result.text += event.delta;
        result.deltas++;
      } else if (event.type === "tool-call") result.toolCalls.push(event.call);
      else result.finish = event;
    }
  } catch (error) {
    if (!(error instanceof RuntimeError)) throw error;
    result.error = error;
  }
  return result;
}
