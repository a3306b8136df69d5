/**
 * @module
 * Model adapters: any OpenAI-compatible endpoint through the `openai` package, over Chat
 * Completions or Responses (per agent), with their stream assemblers and error mapping. Usable
 * outside Workers too: `new OpenAIModel(new OpenAI({ apiKey }))` is a `Model` for `runTurn`.
 */

export { ChatStreamAssembler, type ChatChunk } from "./chat-stream-assembler.ts";
export { toChatMessages } from "./openai-chat-model.ts";
export type { DataUrlOf, FileContent, InlineData } from "./file-parts.ts";
export { OpenAIModel } from "./openai-model.ts";
export { type Embed, embeddingRouter, openAIEmbeddings, type WorkersAiBinding, workersAiEmbeddings } from "./embedding-router.ts";
export type { ProviderDefaults } from "./provider-defaults.ts";
export type { ProviderLog } from "./model-errors.ts";
export { toResponsesInput } from "./openai-responses-model.ts";
export { type ProviderFailure, ResponsesStreamAssembler, type ResponsesEvent } from "./responses-stream-assembler.ts";
// Every type of the run loop, as `handoff-runtime` exports them: the types this entry's signatures use among them.
export type * from "../runtime/index.ts";
