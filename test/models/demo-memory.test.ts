/**
 * The demo's memory on the offline model, as `npm start` shows it: a customer asks to be remembered in one conversation
 * (the `remember` tool), or says it and the conversation is read for it; in their next conversation shipping answers
 * about the order they named before, greeting them in the language they asked for, with no order in the message.
 */
import { describe, expect, it } from "vitest";
import { DemoModel } from "../../src/agents/demo-model.ts";
import { createSupportNetwork } from "../../src/agents/network.ts";
import { extractMemories, type Memory, type MemoryPort, type NewMemory, type RunEvent } from "../../src/runtime/index.ts";
import { MemoryStore } from "../../src/testing/index.ts";
import { eventsOfTurn } from "../support/run.ts";

/** A user's memory as a host keeps it, in a list: a newer memory of a key replaces the older. */
class UserMemory implements MemoryPort {
  readonly memories: Memory[] = [];
  async recall(): Promise<Memory[]> {
    return this.memories;
  }
  async remember(memory: NewMemory): Promise<Memory> {
    const kept = { id: `m${this.memories.length + 1}`, ...memory, createdAt: new Date().toISOString() };
    const older = this.memories.findIndex((m) => m.key !== undefined && m.key === memory.key);
    if (older >= 0) this.memories.splice(older, 1);
    this.memories.push(kept);
    return kept;
  }
}

function turn(store: MemoryStore, memory: MemoryPort, text: string): Promise<RunEvent[]> {
  return eventsOfTurn(createSupportNetwork(), new DemoModel(), {
    store,
    conversation: store.conversation(),
    input: { kind: "message", text },
    memory,
  });
}

const texts = (events: RunEvent[]) => events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("");

describe("the demo remembers a customer", () => {
  it("keeps what it is asked to remember, and uses it in the next conversation: the order, and a greeting in their language", async () => {
    const memory = new UserMemory();
    const first = await turn(new MemoryStore("triage"), memory, "Please remember my order is A1001 and write to me in French.");
    expect(texts(first)).toBe("I will remember that for next time: your order is A1001; you prefer to be written to in French.");
    expect(memory.memories.map((m) => [m.key, m.text])).toEqual([
      ["order", "Their order is A1001"],
      ["language", "Prefers to be written to in French"],
    ]);
    const next = texts(await turn(new MemoryStore("triage"), memory, "My parcel never came."));
    expect(next).toMatch(/^Bonjour ! You told me before that your order is A1001, so I looked at that one\. Order A1001 is /);
  });

  it("reads a conversation for what is worth remembering, a later address over an earlier one", async () => {
    const history = [
      { role: "user" as const, content: "My order is A1002, please write to me in german." },
      { role: "assistant" as const, agent: "shipping", content: "Sure." },
      { role: "user" as const, content: "My address is 1 Main St, Springfield. Oh, and I moved to 5 Rue Mercière, Lyon" },
    ];
    const base = { model: "demo", settings: {}, signal: new AbortController().signal };
    const read = await extractMemories(new DemoModel(), base, history, 0, []);
    expect(read.memories).toEqual([
      { text: "Their order is A1002", type: "fact", key: "order", message: 0 },
      { text: "Prefers to be written to in German", type: "preference", key: "language", message: 0 },
      { text: "Lives at 5 Rue Mercière, Lyon", type: "fact", key: "home address", message: 2 },
    ]);
  });

  it("asks for the order as before when nothing is remembered", async () => {
    expect(texts(await turn(new MemoryStore("triage"), new UserMemory(), "My parcel never came."))).toBe(
      "Which order should I check? Please give the order id, for example A1002.",
    );
  });
});
