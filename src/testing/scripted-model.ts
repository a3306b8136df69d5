import type { Message } from "../runtime/messages.ts";
import type { Model, ModelEvent, ModelRequest } from "../runtime/ports/model-port.ts";
import type { ToolSpec } from "../runtime/tools/tool.ts";

/** One tool call a scripted step makes. */
export interface ScriptedCall {
  id?: string;
  name: string;
  /** Serialized with JSON.stringify; use `rawArgs` for malformed JSON. */
  args?: unknown;
  rawArgs?: string;
}

/** One model call of a script: some text and tool calls, or a failure. */
export type ScriptStep = { text?: string; toolCalls?: ScriptedCall[] } | { throws: Error };

/** What the model was sent, copied at call time. */
export interface RecordedRequest {
  agent: string;
  model: string;
  instructions: string;
  messages: Message[];
  tools: ToolSpec[];
}

/**
 * A model that plays one scripted step per call and records every request. It fails loudly on a
 * call beyond the script, and `assertUsed()` fails when steps were left unplayed.
 */
export class ScriptedModel implements Model {
  readonly requests: RecordedRequest[] = [];
  readonly #steps: ScriptStep[];
  #calls = 0;

  constructor(steps: ScriptStep[]) {
    this.#steps = [...steps];
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.requests.push(
      structuredClone({
        agent: request.agent,
        model: request.model,
        instructions: request.instructions,
        messages: [...request.messages],
        tools: [...request.tools],
      }),
    );
    const step = this.#steps.shift();
    const n = ++this.#calls;
    if (!step) throw new Error(`ScriptedModel: unexpected model call #${n} (the script has ${n - 1} steps)`);
    if ("throws" in step) throw step.throws;
    if (step.text) {
      for (const word of step.text.split(/(?<= )/)) yield { type: "text-delta", delta: word };
    }
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      yield {
        type: "tool-call",
        call: { id: call.id ?? `call_${n}_${i}`, name: call.name, arguments: call.rawArgs ?? JSON.stringify(call.args ?? {}) },
      };
    }
    yield { type: "finish", finishReason: step.toolCalls?.length ? "tool_calls" : "stop", usage: { inputTokens: 10, outputTokens: 5 } };
  }

  assertUsed(): void {
    if (this.#steps.length > 0) throw new Error(`ScriptedModel: ${this.#steps.length} scripted steps were never played`);
  }
}
