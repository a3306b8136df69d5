/**
 * @module
 * Model adapters: the OpenAI-compatible Chat Completions adapter and the offline demo model.
 */
import OpenAI from "openai";
import type { Config } from "../config.ts";
import type { Model } from "../runtime/index.ts";
import { DemoModel } from "./demo-model.ts";
import { OpenAIChatModel } from "./openai-chat-model.ts";

export { DemoModel } from "./demo-model.ts";
export { OpenAIChatModel, toChatMessages } from "./openai-chat-model.ts";
export { ChatStreamAssembler, type ChatChunk } from "./chat-stream-assembler.ts";

/** The demo model answers when neither a key nor a base URL is configured. */
export function createModel(config: Config): Model {
  if (!config.OPENAI_API_KEY && !config.OPENAI_BASE_URL) return new DemoModel({ delayMs: config.DEMO_DELAY_MS });
  const client = new OpenAI({
    apiKey: config.OPENAI_API_KEY ?? "not-needed",
    ...(config.OPENAI_BASE_URL ? { baseURL: config.OPENAI_BASE_URL } : {}),
    maxRetries: config.OPENAI_MAX_RETRIES,
  });
  return new OpenAIChatModel(client);
}
