/** What the fake server's OTLP receiver got (test/node/fake-openai-server.ts), read back as a collector would. */
import { expect, inject } from "vitest";
import type { DecodedExport, DecodedSpan } from "../node/otlp-decode.ts";

export type Received = { body: unknown; decoded?: DecodedExport; headers: Record<string, string> };

/** Every export the collector named `collector` received (POST /otlp/<collector>/v1/traces). */
export async function collected(collector: string): Promise<Received[]> {
  return (await (await fetch(`${inject("fakeOpenAIUrl")}/otlp/${collector}`)).json()) as Received[];
}

/** Every span `collector` has decoded for a conversation, waiting until `enough` says they are all there. */
export async function exportedSpans(
  collector: string,
  conversationId: string,
  enough: (spans: DecodedSpan[]) => boolean,
): Promise<DecodedSpan[]> {
  for (let i = 0; i < 100; i++) {
    const received = await collected(collector);
    for (const r of received) expect(r.decoded?.problems ?? []).toEqual([]);
    const spans = received
      .flatMap((r) => r.decoded?.spans ?? [])
      .filter((span) => span.attributes["gen_ai.conversation.id"] === conversationId);
    if (enough(spans)) return spans;
    if (i === 99) throw new Error(`the trace did not arrive at the collector; it has ${spans.map((span) => span.name).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("unreachable");
}

/** The spans of one GenAI operation (`chat`, `execute_tool`, `invoke_agent`). */
export const operation = (spans: DecodedSpan[], name: string) => spans.filter((span) => span.attributes["gen_ai.operation.name"] === name);

/** A turn worth tracing: triage hands to billing, which looks the order up and answers. */
export const TRACED_TURN = [
  { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "a charge" }) }] },
  { toolCalls: [{ id: "l", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
  { text: "I see the double charge." },
];
