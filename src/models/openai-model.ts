import type OpenAI from "openai";
import type { Model, ModelEvent, ModelRequest } from "../runtime/index.ts";
import { streamChatCompletion } from "./openai-chat-model.ts";
import { streamResponse } from "./openai-responses-model.ts";
import type { ProviderDefaults } from "./provider-defaults.ts";

/** An OpenAI-compatible provider through the `openai` package; the API is chosen per agent. */
export class OpenAIModel implements Model {
  readonly #client: OpenAI;
  readonly #defaults: ProviderDefaults;

  constructor(client: OpenAI, defaults: ProviderDefaults) {
    this.#client = client;
    this.#defaults = defaults;
  }

  stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const api = request.settings.api ?? this.#defaults.api ?? "chat";
    return api === "responses"
      ? streamResponse(this.#client, this.#defaults, request)
      : streamChatCompletion(this.#client, this.#defaults, request);
  }
}
