/**
 * The awake bench's Worker: triage hands the conversation to a person at the desk. The one change
 * from a team's Worker is instrumentation: the Conversation logs a line each time its object is
 * constructed, that is each time it wakes (after an eviction, or hibernation).
 */
import { createHandoffWorker } from "../../../src/cloudflare/index.ts";
import { Agent, humanAgent, Network } from "../../../src/runtime/index.ts";

const desk = humanAgent({ name: "desk", description: "A person at the support desk." });
const triage = new Agent({ name: "triage", instructions: "Hand customers who ask for a person to the desk.", handoffs: [desk] });
const worker = createHandoffWorker({ network: new Network(triage, { defaultModel: "gpt-4o-mini" }) });

export class Conversation extends worker.Conversation {
  constructor(...args: ConstructorParameters<typeof worker.Conversation>) {
    super(...args);
    console.log(JSON.stringify({ bench: "woke", at: Date.now() }));
  }
}
export const OperatorDesk = worker.OperatorDesk;
export default { fetch: worker.fetch };
