import { type Redactor, type RunEvent, StreamingRedaction } from "../runtime/index.ts";

/**
 * A run's events with the configured secrets redacted, before they are numbered, stored or sent.
 * Text deltas go through a streaming redaction, so a secret split across deltas is caught too;
 * what it holds back is sent before the next event of another kind.
 */
export async function* redactEvents(events: AsyncIterable<RunEvent>, redactor: Redactor): AsyncGenerator<RunEvent> {
  if (redactor.empty) return yield* events;
  const text = new StreamingRedaction(redactor);
  for await (const event of events) {
    if (event.type === "text-delta") {
      const delta = text.push(event.delta);
      if (delta) yield { type: "text-delta", delta };
      continue;
    }
    const held = text.flush();
    if (held) yield { type: "text-delta", delta: held };
    yield redactor.value(event);
  }
}
