import type { Message } from "../runtime/messages.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Redactor } from "../runtime/redact.ts";

/**
 * The model as the conversation uses it: what it is sent passes the redactor first, so a secret a
 * tool echoed (an MCP server repeating its credentials, say) never reaches the provider either.
 * Messages are immutable once in the history, so each is redacted once.
 */
export function redactingModel(model: Model, redactor: Redactor): Model {
  const redacted = new WeakMap<Message, Message>();
  const clean = (message: Message): Message => {
    let copy = redacted.get(message);
    if (!copy) {
      copy = redactor.value(message);
      redacted.set(message, copy);
    }
    return copy;
  };
  return {
    ...(model.label ? { label: model.label } : {}),
    stream: (request) =>
      model.stream({ ...request, instructions: redactor.text(request.instructions), messages: request.messages.map(clean) }),
  };
}
