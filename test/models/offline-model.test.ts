/**
 * The offline model (`OFFLINE_MODEL=true`) run against a network like the README's: it reads only
 * the request, so each handoff, tool call and approval it makes is the runtime's real one.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { OfflineModel } from "../../src/models/offline-model.ts";
import { Agent, handoff, humanAgent, Network, type RunEvent, runTurn, type TurnInput, tool } from "../../src/runtime/index.ts";
import { MemoryStore } from "../../src/testing/index.ts";

function network(style?: "single" | "named"): Network {
  const checkAvailability = tool({
    name: "check_availability",
    description: "Free tables on a date.",
    parameters: z.object({ date: z.string(), seats: z.number() }),
    execute: ({ date, seats }) => ({ date, seats, free: ["19:00"] }),
  });
  const cancelBooking = tool({
    name: "cancel_booking",
    description: "Cancels a booking.",
    parameters: z.object({ bookingId: z.string() }),
    needsApproval: true,
    execute: () => ({ cancelled: true }),
  });
  const bookings = new Agent({
    name: "bookings",
    description: "Books tables and checks which are free.",
    instructions: "",
    tools: [checkAvailability, cancelBooking],
  });
  const menu = new Agent({ name: "menu", description: "The menu.", instructions: "" });
  const frontDesk = humanAgent({ name: "front-desk", description: "A person." });
  const concierge = new Agent({
    name: "concierge",
    description: "Greets.",
    instructions: "",
    handoffs: [bookings, handoff(menu, { returns: "on-answer" }), frontDesk],
  });
  bookings.addHandoff(concierge);
  return new Network(concierge, { defaultModel: "m", ...(style ? { toolStyle: style } : {}) });
}

async function turn(net: Network, store: MemoryStore, input: string | TurnInput): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  const run = runTurn({
    conversationId: "c1",
    network: net,
    model: new OfflineModel(),
    store,
    conversation: store.conversation(),
    input: typeof input === "string" ? { kind: "message", text: input } : input,
  });
  for (let next = await run.next(); !next.done; next = await run.next()) events.push(next.value);
  return events;
}

const texts = (events: RunEvent[]) => events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("");

describe("the offline model", () => {
  it("says it is no real model, in run-start (demo) and in its answer, and names the agents and tools it can reach", async () => {
    const events = await turn(network(), new MemoryStore("concierge"), "hello");
    expect(events[0]).toMatchObject({ type: "run-start", demo: true });
    expect(texts(events)).toBe(
      "This is concierge, answered by the offline model (not a real model). Name an agent to be handed to it: bookings, menu, front-desk.",
    );
  });

  it("hands the conversation to the agent a message names (a stem is enough), and that agent answers in the same turn", async () => {
    const store = new MemoryStore("concierge");
    const events = await turn(network(), store, "I'd like a booking for Friday");
    expect(events.filter((e) => e.type === "handoff").map((e) => e.type === "handoff" && [e.from, e.to])).toEqual([
      ["concierge", "bookings"],
    ]);
    expect(texts(events)).toContain("This is bookings");
    expect(texts(events)).toContain("Name a tool to call it: check_availability, cancel_booking.");
    expect(store.holding.activeAgent).toBe("bookings");
  });

  it("hands over with one transfer_to_agent tool too", async () => {
    const store = new MemoryStore("concierge");
    const events = await turn(network("single"), store, "what is on the menu");
    expect(events.find((e) => e.type === "tool-call")).toMatchObject({ name: "transfer_to_agent", args: { agent_name: "menu" } });
    expect(events.some((e) => e.type === "handoff" && e.to === "menu")).toBe(true);
  });

  it("calls a tool the message names with its required arguments, and answers with the result", async () => {
    const store = new MemoryStore("concierge");
    await turn(network(), store, "bookings please");
    const events = await turn(network(), store, "check availability");
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({
      name: "check_availability",
      isError: false,
      result: { date: "check availability", seats: 1, free: ["19:00"] },
    });
    expect(texts(events)).toBe('bookings: check_availability answered {"date":"check availability","seats":1,"free":["19:00"]}');
  });

  it("asks for a tool that needs approval, its string argument the word after the parameter's name: the turn waits for it", async () => {
    const store = new MemoryStore("concierge");
    await turn(network(), store, "bookings please");
    const events = await turn(network(), store, "cancel booking B7, please");
    expect(events.find((e) => e.type === "tool-call")).toMatchObject({ name: "cancel_booking", args: { bookingId: "B7" } });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval", agent: "bookings" });
  });

  it("takes a string argument after the parameter's whole name, and the whole message where the name is not there", async () => {
    const store = new MemoryStore("concierge");
    await turn(network(), store, "bookings please");
    const named = await turn(network(), store, "check availability for the date 2026-12-24");
    expect(named.find((e) => e.type === "tool-call")).toMatchObject({ args: { date: "2026-12-24", seats: 1 } });
  });

  it("hands a guest to the person's agent when the message asks for a person or a human, by its description", async () => {
    for (const words of ["I want to talk to a person", "a human, please"]) {
      const events = await turn(network(), new MemoryStore("concierge"), words);
      expect(events.find((e) => e.type === "tool-call")).toMatchObject({
        name: "transfer_to_front_desk",
        args: { reason: "the message asks for a person" },
      });
      expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_human", agent: "front-desk" });
    }
  });

  it("hands over to the agent whose description the message matches, in each tool style", async () => {
    for (const style of [undefined, "single", "named"] as const) {
      const store = new MemoryStore("concierge");
      const events = await turn(network(style), store, "are there free tables tonight?");
      expect(events.filter((e) => e.type === "handoff").map((e) => e.type === "handoff" && e.to)).toEqual(["bookings"]);
      expect(store.holding.activeAgent).toBe("bookings");
    }
  });

  it("hands a guest to a person when the message names them", async () => {
    const store = new MemoryStore("concierge");
    const events = await turn(network(), store, "can someone at the front desk help");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_human", agent: "front-desk" });
  });
});
