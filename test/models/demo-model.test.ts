/**
 * The demo's offline model (`npm start` with no key) on the demo's own network: what a first user meets in the refund
 * journey. It reads only the request, so each handoff, tool call and approval is the runtime's real one.
 */
import { describe, expect, it } from "vitest";
import { DemoModel } from "../../src/agents/demo-model.ts";
import { createSupportNetwork } from "../../src/agents/network.ts";
import type { RunEvent, TurnInput } from "../../src/runtime/index.ts";
import { MemoryFiles, MemoryStore } from "../../src/testing/index.ts";
import { eventsOfTurn } from "../support/run.ts";

/** A turn of the demo network on the demo model, from what `store` holds. */
function turn(store: MemoryStore, input: string | TurnInput): Promise<RunEvent[]> {
  const message: TurnInput = typeof input === "string" ? { kind: "message", text: input } : input;
  return eventsOfTurn(createSupportNetwork(), new DemoModel(), { store, conversation: store.conversation(), input: message });
}

const texts = (events: RunEvent[]) => events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("");

describe("the demo's refund journey", () => {
  it("keeps the user's intent when they answer 'Which order is it?' with the order alone: a refund is offered at once", async () => {
    const store = new MemoryStore("triage");
    expect(texts(await turn(store, "I want a refund, I was charged twice"))).toContain("Which order is it?");
    const answered = await turn(store, "A1001");
    expect(answered.find((e) => e.type === "approval-required")).toMatchObject({
      name: "refund",
      args: { orderId: "A1001", amountUsd: 129 },
      message: "Refund 129 USD for order A1001?",
    });
  });

  it("answers a declined refund in words, and an order alone with no question before it as a lookup", async () => {
    const store = new MemoryStore("triage");
    await turn(store, "I was charged twice for order A1001, please refund it.");
    const declined = await turn(store, {
      kind: "resume",
      suspension: store.suspension!,
      decisions: [{ toolCallId: store.suspension!.pending[0]!.toolCallId, approved: false }],
    });
    expect(texts(declined)).toBe("Understood: order A1001 is not refunded. Tell me if you change your mind.");
    expect(texts(await turn(store, "A1001"))).toMatch(/^Order A1001 .* was charged 2 time\(s\)/);
  });
});

describe("the demo's damaged parcel journey", () => {
  it("opens a damage claim with the customer's photo, asking the order first, and gives back the claim form it saved", async () => {
    const store = new MemoryStore("triage");
    const files = new MemoryFiles();
    const photo = await files.add({ bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]), mediaType: "image/png", name: "box.png" });
    const first = await eventsOfTurn(createSupportNetwork(), new DemoModel(), {
      store,
      conversation: store.conversation(),
      files,
      input: { kind: "message", text: "My parcel arrived damaged, I attach a photo", files: [photo] },
    });
    expect(first.filter((e) => e.type === "handoff").map((e) => e.type === "handoff" && e.to)).toEqual(["shipping"]);
    expect(texts(first)).toBe("I see your photo. Which order is it? Please give the order id, for example A1002.");
    const answered = await eventsOfTurn(createSupportNetwork(), new DemoModel(), {
      store,
      conversation: store.conversation(),
      files,
      input: { kind: "message", text: "A1002" },
    });
    const claim = answered.find((e) => e.type === "tool-result" && e.name === "open_damage_claim");
    expect(claim).toMatchObject({ isError: false, result: { orderId: "A1002", photoBytes: 7 }, files: [{ mediaType: "text/plain" }] });
    const form = claim?.type === "tool-result" ? claim.files![0]! : undefined;
    expect(files.text(form!.id)).toMatch(/^Damage claim DC-A1002-\d{5}\nOrder: A1002/);
    expect(texts(answered)).toMatch(
      /^I have opened damage claim DC-A1002-\d{5} for order A1002, with your photo "box.png"\. Your claim form, claim-DC-A1002-\d{5}\.txt, is below\.$/,
    );
  });
});

describe("the examples an empty chat offers", () => {
  /** The turn's answer in words, and the agent triage handed it to (none: triage answered), on a new conversation. */
  async function answer(example: string): Promise<{ text: string; agent: string; asked: boolean }> {
    const events = await turn(new MemoryStore("triage"), example);
    const handedTo = events.find((e) => e.type === "handoff" && e.kind === "transfer");
    // A request to the user, or a person who holds the conversation now, is an answer too.
    const asked = events.some(
      (e) => e.type === "approval-required" || e.type === "input-required" || (e.type === "done" && e.status === "awaiting_human"),
    );
    return { text: texts(events), agent: handedTo?.type === "handoff" ? handedTo.to : "triage", asked };
  }

  it("each agent's first (what the page offers) is answered by that agent on the offline model, not by a fallback", async () => {
    const offered = [...createSupportNetwork().agents.values()].flatMap((agent) =>
      agent.examples.slice(0, 1).map((example) => ({ agent: agent.name, example })),
    );
    expect(offered.length).toBeGreaterThanOrEqual(3);
    for (const { agent, example } of offered) {
      const { text, agent: answeredBy, asked } = await answer(example);
      expect(answeredBy, example).toBe(agent);
      expect(text.length > 0 || asked, `${example}: an answer or a request`).toBe(true);
      expect(text, example).not.toMatch(/Give me numbers|I do not understand|not sure what you mean/i);
    }
  });

  it.each([
    ["what is 12 times 7", "The answer is 84."],
    ["solve x^2 = 9", "The solutions are x = -3 and x = 3."],
    ["calculate the square root of 81", "The answer is 9."],
    ["compute 15% of 200", "The answer is 30."],
    ["what is 3 + 4 * 2", "The answer is 11."],
    ["What is 12 * 7?", "The answer is 84."],
    ["Solve x^2 - 5x + 6 = 0", "The solutions are x = 2 and x = 3."],
    ["what is 2 to the power of 10 minus 24 divided by 4", "The answer is 1018."],
  ])("the calculator's %j: %s", async (example, expected) => {
    const { text, agent } = await answer(example);
    expect(agent).toBe("calculator");
    expect(text).toContain(expected);
  });
});
