import type OpenAI from "openai";
import type { Model, ModelEvent, ModelRequest } from "../runtime/ports/model-port.ts";
import { streamChatCompletion } from "./openai-chat-model.ts";
import { streamResponse } from "./openai-responses-model.ts";
import type { ProviderDefaults } from "./provider-defaults.ts";

/**
 * An OpenAI-compatible provider through the `openai` package (give the client its `baseURL` for
 * another provider). The API is chosen per agent (`modelSettings.api`), else by `defaults.api`.
 */
export class OpenAIModel implements Model {
  readonly #client: OpenAI;
  readonly #defaults: ProviderDefaults;

  /** `defaults`: settings for agents that set none, and a stream's idle timeout (60 s unless set). */
  constructor(client: OpenAI, defaults: Partial<ProviderDefaults> = {}) {
    this.#client = client;
    this.#defaults = { idleTimeoutMs: 60_000, ...defaults };
  }

  /** Streams one step; failures are RuntimeErrors with a model_* code and a message of this runtime's own. */
  stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const api = request.settings.api ?? this.#defaults.api ?? "chat";
    return api === "responses"
      ? streamResponse(this.#client, this.#defaults, request)
      : streamChatCompletion(this.#client, this.#defaults, request);
  }
}
