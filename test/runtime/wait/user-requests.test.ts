/**
 * The one wait for the user, in the loop: a tool's question (`ctx.ask`), a client tool (no
 * `execute`), each answered and declined, a call that asks twice, and a step that waits for an
 * approval and a question at once. What is checked is what a client sees (the events) and what
 * the store keeps (the suspension, the history).
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, type Decision, Network, tool } from "../../../src/runtime/index.ts";
import { ofType, playTurn, type TurnResult } from "../../support/run.ts";

const resume = (first: TurnResult, decisions: Decision[]) => ({ kind: "resume", suspension: first.store.suspension!, decisions }) as const;

/** What each run of a call did before its ask: code before an ask runs again when the call does. */
const ran: string[] = [];

const Redelivery = z.object({ day: z.iso.date(), where: z.enum(["front door", "neighbour", "locker"]) });

function network(): Network {
  const redeliver = tool({
    name: "redeliver",
    description: "Books a redelivery, asking the customer when and where.",
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }, ctx) => {
      ran.push(`start ${orderId}`);
      const { day, where } = await ctx.ask({ message: `When and where should order ${orderId} come?`, schema: Redelivery });
      return `Redelivery of ${orderId} on ${day}, ${where}.`;
    },
  });
  const twice = tool({
    name: "sign_up",
    description: "Asks a name, then an email.",
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      const name = await ctx.ask({ message: "Your name?", schema: z.string().min(1) });
      const email = await ctx.ask({ message: `Your email, ${name}?`, schema: z.email(), expiresIn: "10m" });
      return { name, email };
    },
  });
  const slot = tool({
    name: "choose_slot",
    description: "The customer picks a delivery slot in their browser.",
    parameters: z.object({ slots: z.array(z.string()) }),
    outputSchema: z.object({ slot: z.string() }),
  });
  const refund = tool({
    name: "refund",
    description: "Refunds.",
    parameters: z.object({}),
    needsApproval: true,
    execute: () => "refunded",
  });
  const agent = new Agent({ name: "shipping", description: "d", instructions: "i", tools: [redeliver, twice, slot, refund] });
  return new Network(agent, { defaultModel: "m" });
}

describe("the user in the loop", () => {
  it("a question suspends the step; its answer is what ctx.ask returns, the call running again from its start", async () => {
    ran.length = 0;
    const first = await playTurn(network(), "redeliver A1", [{ toolCalls: [{ id: "q", name: "redeliver", args: { orderId: "A1" } }] }]);
    expect(ofType(first.events, "input-required")).toEqual([
      {
        type: "input-required",
        kind: "question",
        toolCallId: "q",
        name: "redeliver",
        args: { orderId: "A1" },
        agent: "shipping",
        message: "When and where should order A1 come?",
        schema: {
          type: "object",
          properties: {
            day: { type: "string", format: "date", pattern: expect.any(String) },
            where: { type: "string", enum: ["front door", "neighbour", "locker"] },
          },
          required: ["day", "where"],
        },
      },
    ]);
    expect(ofType(first.events, "done")[0]).toMatchObject({ status: "awaiting_input" });
    expect(first.store.history.map((m) => m.role)).toEqual(["user"]);
    const second = await playTurn(
      network(),
      resume(first, [{ toolCallId: "q", answer: { day: "2026-12-08", where: "locker" } }]),
      [{ text: "Booked." }],
      {
        store: first.store,
      },
    );
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({
      toolCallId: "q",
      isError: false,
      result: "Redelivery of A1 on 2026-12-08, locker.",
    });
    expect(ran).toEqual(["start A1", "start A1"]);
    expect(second.model.requests[0]!.messages.at(-1)).toMatchObject({ role: "tool", content: "Redelivery of A1 on 2026-12-08, locker." });
    expect(first.store.suspension).toBeNull();
  });

  it("a declined question is answered so, without running the call again", async () => {
    ran.length = 0;
    const first = await playTurn(network(), "redeliver A1", [{ toolCalls: [{ id: "q", name: "redeliver", args: { orderId: "A1" } }] }]);
    const second = await playTurn(
      network(),
      resume(first, [{ toolCallId: "q", approved: false, reason: "I will collect it" }]),
      [{ text: "OK." }],
      {
        store: first.store,
      },
    );
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({
      isError: true,
      denied: true,
      result: "The user declined to answer: I will collect it",
    });
    expect(ran).toEqual(["start A1"]);
  });

  it("a call that asks twice waits twice: the second ask is a request of its own, with its own deadline", async () => {
    const first = await playTurn(network(), "sign me up", [{ toolCalls: [{ id: "s", name: "sign_up", args: {} }] }]);
    expect(ofType(first.events, "input-required")[0]).toMatchObject({ message: "Your name?" });
    const second = await playTurn(network(), resume(first, [{ toolCallId: "s", answer: "Ada" }]), [], { store: first.store });
    const asked = ofType(second.events, "input-required")[0]!;
    expect(asked).toMatchObject({ toolCallId: "s", message: "Your email, Ada?", schema: { type: "string", format: "email" } });
    expect(Date.parse(asked.expiresAt!) - Date.now()).toBeGreaterThan(9 * 60_000);
    expect("earlier" in asked).toBe(false);
    expect(ofType(second.events, "done")[0]).toMatchObject({ status: "awaiting_input" });
    expect(first.store.suspension?.pending).toMatchObject([{ kind: "question", earlier: ["Ada"] }]);
    const third = await playTurn(network(), resume(second, [{ toolCallId: "s", answer: "ada@example.com" }]), [{ text: "Signed up." }], {
      store: first.store,
    });
    expect(ofType(third.events, "tool-result")[0]).toMatchObject({ result: { name: "Ada", email: "ada@example.com" } });
    expect(first.store.history.filter((m) => m.role === "tool")).toHaveLength(1);
  });

  it("a client tool waits for the user's client: its output is the call's result, and a decline is an error the model reads", async () => {
    const slots = { slots: ["Mon 9-12", "Tue 14-17"] };
    const first = await playTurn(network(), "pick a slot", [{ toolCalls: [{ id: "c", name: "choose_slot", args: slots }] }]);
    expect(ofType(first.events, "input-required")).toEqual([
      {
        type: "input-required",
        kind: "client-tool",
        toolCallId: "c",
        name: "choose_slot",
        args: slots,
        agent: "shipping",
        schema: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] },
      },
    ]);
    // Nothing ran on the server: no call was written ahead.
    expect(ofType(first.events, "tool-result")).toEqual([]);
    const second = await playTurn(
      network(),
      resume(first, [{ toolCallId: "c", answer: { slot: "Tue 14-17" } }]),
      [{ text: "Tuesday it is." }],
      {
        store: first.store,
      },
    );
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({ isError: false, result: { slot: "Tue 14-17" } });
    expect(second.model.requests[0]!.messages.at(-1)).toMatchObject({ role: "tool", content: '{"slot":"Tue 14-17"}' });

    const again = await playTurn(network(), "pick a slot", [{ toolCalls: [{ id: "c2", name: "choose_slot", args: slots }] }]);
    const declined = await playTurn(network(), resume(again, [{ toolCallId: "c2", approved: false }]), [{ text: "OK." }], {
      store: again.store,
    });
    expect(ofType(declined.events, "tool-result")[0]).toMatchObject({
      isError: true,
      denied: true,
      result: "The user declined to run this on their side.",
    });
  });

  it("one step can wait for an approval and a question at once: the turn is awaiting_input until both are answered", async () => {
    const first = await playTurn(network(), "refund and redeliver", [
      {
        toolCalls: [
          { id: "r", name: "refund", args: {} },
          { id: "q", name: "redeliver", args: { orderId: "A2" } },
        ],
      },
    ]);
    expect(first.events.filter((e) => e.type === "approval-required" || e.type === "input-required").map((e) => e.type)).toEqual([
      "approval-required",
      "input-required",
    ]);
    expect(ofType(first.events, "done")[0]).toMatchObject({ status: "awaiting_input" });
    const second = await playTurn(
      network(),
      resume(first, [
        { toolCallId: "r", approved: true },
        { toolCallId: "q", answer: { day: "2026-12-09", where: "neighbour" } },
      ]),
      [{ text: "Both done." }],
      { store: first.store },
    );
    expect(ofType(second.events, "tool-result").map((e) => [e.toolCallId, e.result])).toEqual([
      ["r", "refunded"],
      ["q", "Redelivery of A2 on 2026-12-09, neighbour."],
    ]);
    expect(first.store.history.find((m) => m.role === "tool" && m.toolCallId === "r")).toMatchObject({ approval: { approved: true } });
  });
});
