/**
 * An example bank network for the evals: a triage agent and five specialists, with the intents of
 * Banking77 mapped to them (intents.ts). `npx handoff-eval run examples/bank/banking77-sample.jsonl
 * --network examples/bank/network.ts` evaluates whether each customer message reaches the right one.
 */
import { Agent, Network } from "../../src/runtime/index.ts";

const specialist = (name: string, description: string) =>
  new Agent({ name, description, instructions: `You are the bank's ${name} specialist: ${description} Answer the customer, or transfer back to triage when the question is not yours.` });

export default function bankNetwork(): Network {
  const cards = specialist("cards", "Card delivery, activation, PINs, lost, stolen or blocked cards, virtual and disposable cards.");
  const billing = specialist("billing", "Card payments and charges, fees, refunds, cash withdrawals and exchange rates on them.");
  const transfers = specialist("transfers", "Bank transfers in and out: pending, failed, cancelled, fees, beneficiaries, timing.");
  const topUps = specialist("top_ups", "Topping up the account by card, bank transfer, cash or cheque, Apple Pay or Google Pay, top-up limits.");
  const account = specialist("account", "Identity verification, personal details, passcodes, supported countries and currencies, closing the account.");
  const triage = new Agent({
    name: "triage",
    description: "Greets the customer and routes them to the right specialist.",
    instructions:
      "You are the bank's front desk. Work out what the customer needs and transfer them to the one specialist for it: cards, billing (payments and charges), transfers, top_ups or account. Do not answer yourself; ask one short question when you cannot tell.",
    handoffs: [cards, billing, transfers, topUps, account],
  });
  for (const s of [cards, billing, transfers, topUps, account]) s.addHandoff(triage);
  return new Network(triage, { defaultModel: process.env.OPENAI_MODEL ?? "gpt-4o-mini" });
}
