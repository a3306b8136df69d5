/**
 * The one wait for the user, through the Worker in workerd: the demo network's question
 * (`arrange_redelivery`, `ctx.ask`) and client tool (`choose_delivery_slot`) answered over HTTP
 * (`POST …/decisions`) and over the socket; answers checked against the request's schema (a wrong
 * one is a 400 and the request still waits), a secret in an answer redacted, an operator refused a
 * request that does not let one answer, and a wait that survives the object's restart.
 */
import { env, evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { openSocket } from "../support/socket.ts";
import { parseSse } from "../support/sse.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const transfer = { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "delivery" }) }] };
const redeliver = { toolCalls: [{ id: "q", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1001" }) }] };
const slots = ["Mon 9:00-12:00", "Tue 9:00-12:00"];
const chooseSlot = { toolCalls: [{ id: "c", name: "choose_delivery_slot", arguments: JSON.stringify({ orderId: "A1002", slots }) }] };

const decide = (id: string, decisions: unknown, path = "decisions") =>
  call(`/v1/conversations/${id}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decisions }),
  });

interface Waiting {
  status: string;
  pendingRequests: Array<Record<string, unknown>>;
  pendingApprovals: unknown[];
}
const view = async (id: string) => (await (await call(`/v1/conversations/${id}`)).json()) as Waiting;

describe("requests to the user over HTTP", () => {
  it("a question: listed in the view, a wrong answer refused with 400 (still waiting), the right one resumes the call", async () => {
    const s = await scenario([transfer, redeliver, { text: "Booked." }]);
    const events = await chat(s.conversationId, s.tag("please redeliver order A1001"));
    expect(events.find((e) => e.type === "input-required")).toMatchObject({
      kind: "question",
      toolCallId: "q",
      agent: "shipping",
      message: "When should order A1001 come again, and where should it be left?",
      schema: { properties: { where: { enum: ["front door", "neighbour", "parcel locker"] } } },
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_input" });
    const waiting = await view(s.conversationId);
    expect(waiting).toMatchObject({
      status: "awaiting_input",
      pendingApprovals: [],
      pendingRequests: [{ kind: "question", toolCallId: "q" }],
    });

    const wrong = await decide(s.conversationId, [{ toolCallId: "q", answer: { day: "next week", where: "roof" } }]);
    expect(wrong.status).toBe(400);
    const refused = (await wrong.json()) as { error: { code: string; message: string } };
    expect(refused.error.code).toBe("invalid_answer");
    expect(refused.error.message).toMatch(/day/);
    expect(refused.error.message).toMatch(/where/);
    // A yes is no answer to a question.
    expect((await decide(s.conversationId, [{ toolCallId: "q", approved: true }])).status).toBe(400);
    expect(await view(s.conversationId)).toMatchObject({ status: "awaiting_input", pendingRequests: [{ toolCallId: "q" }] });

    const answered = await decide(s.conversationId, [{ toolCallId: "q", answer: { day: "2026-12-08", where: "parcel locker" } }]);
    expect(answered.status).toBe(200);
    const resumed = parseSse(await answered.text());
    expect(resumed.find((e) => e.type === "tool-result")).toMatchObject({
      toolCallId: "q",
      isError: false,
      result: { orderId: "A1001", redeliveryDay: "2026-12-08", leaveAt: "parcel locker" },
    });
    expect(resumed.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Booked." });
    const after = await stored(s.conversationId);
    expect(after.activity).toMatchObject([{ kind: "answered", toolCallId: "q", tool: "arrange_redelivery" }]);
    // What the model was sent after: the call's result, as ctx.ask returned the answer.
    expect((await s.sent()).requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "q" });
  });

  it("a client tool: the page's output (checked against the tool's output schema) is the result; /approvals takes it too", async () => {
    const s = await scenario([transfer, chooseSlot, { text: "See you Tuesday." }]);
    const events = await chat(s.conversationId, s.tag("I need a delivery slot for A1002"));
    expect(events.find((e) => e.type === "input-required")).toMatchObject({
      kind: "client-tool",
      name: "choose_delivery_slot",
      args: { orderId: "A1002", slots },
      schema: { type: "object", properties: { slot: { type: "string" } }, required: ["slot"] },
    });
    expect((await decide(s.conversationId, [{ toolCallId: "c", answer: "Tuesday" }], "approvals")).status).toBe(400);
    const answered = await decide(s.conversationId, [{ toolCallId: "c", answer: { slot: slots[1] } }], "approvals");
    const resumed = parseSse(await answered.text());
    expect(resumed.find((e) => e.type === "tool-result")).toMatchObject({ toolCallId: "c", result: { slot: slots[1] } });
    expect((await stored(s.conversationId)).messages.find((m) => m.role === "tool" && m.toolCallId === "c")).toMatchObject({
      content: JSON.stringify({ slot: slots[1] }),
      isError: false,
    });
  });

  it("an MCP elicitation: the tracking server's form, its content sent back to the server; a decline goes back as decline", async () => {
    const hold = { toolCalls: [{ id: "h", name: "tracking_hold_at_depot", arguments: JSON.stringify({ orderId: "A1002" }) }] };
    const s = await scenario([transfer, hold, { text: "Held." }]);
    const events = await chat(s.conversationId, s.tag("please hold the parcel of A1002"));
    expect(events.find((e) => e.type === "input-required")).toMatchObject({
      kind: "elicitation",
      mode: "form",
      server: "tracking",
      message: "Hold the parcel of order A1002 at a depot for you to collect?",
      schema: { properties: { confirm: { type: "boolean" }, depot: { enum: ["Leeds", "London", "Bristol"] } } },
    });
    expect((await decide(s.conversationId, [{ toolCallId: "h", answer: { confirm: "yes" } }])).status).toBe(400);
    const resumed = parseSse(
      await (await decide(s.conversationId, [{ toolCallId: "h", answer: { confirm: true, depot: "Leeds" } }])).text(),
    );
    expect(resumed.find((e) => e.type === "tool-result")).toMatchObject({
      toolCallId: "h",
      result: "The parcel of order A1002 is held at the Leeds depot for collection.",
    });

    const again = await scenario([transfer, { toolCalls: [{ ...hold.toolCalls[0]!, id: "h2" }] }, { text: "Not held." }]);
    await chat(again.conversationId, again.tag("please hold the parcel of A1002"));
    const declined = parseSse(await (await decide(again.conversationId, [{ toolCallId: "h2", approved: false }])).text());
    expect(declined.find((e) => e.type === "tool-result")).toMatchObject({
      result: "The customer did not confirm: the parcel of order A1002 was not held.",
    });
  });

  it("an answer is stored and streamed without the configured secrets in it", async () => {
    const s = await scenario([transfer, chooseSlot, { text: "Done." }]);
    await chat(s.conversationId, s.tag("I need a delivery slot for A1002"));
    // A binding this test suite sets (test/env.d.ts does not type the suite's own bindings).
    const secret = (env as unknown as Record<string, string>).ORDERS_API_TOKEN!;
    const answered = await decide(s.conversationId, [{ toolCallId: "c", answer: { slot: `Mon ${secret}` } }]);
    const text = await answered.text();
    expect(text).not.toContain(secret);
    const after = JSON.stringify(await stored(s.conversationId));
    expect(after).not.toContain(secret);
    expect(after).toContain("Mon [redacted]");
  });

  it("only the owner answers a question: an operator is refused one that does not let an operator answer", async () => {
    const s = await scenario([transfer, redeliver]);
    await chat(s.conversationId, s.tag("please redeliver order A1001"));
    const object = env.CONVERSATIONS.getByName(s.conversationId);
    const asOperator = await object.decide({ conversationId: s.conversationId, operator: true }, [
      { toolCallId: "q", answer: { day: "2026-12-08", where: "neighbour" } },
    ]);
    expect(asOperator).toMatchObject({ ok: false, error: { code: "answer_not_allowed" } });
    expect(await view(s.conversationId)).toMatchObject({ pendingRequests: [{ toolCallId: "q" }] });
  });

  it("a wait survives the object's restart, and answering then resumes it as the same agent", async () => {
    const s = await scenario([transfer, redeliver, { text: "Booked after the restart." }]);
    await chat(s.conversationId, s.tag("please redeliver order A1001"));
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    expect(await view(s.conversationId)).toMatchObject({
      status: "awaiting_input",
      pendingRequests: [{ kind: "question", toolCallId: "q" }],
    });
    const resumed = parseSse(
      await (await decide(s.conversationId, [{ toolCallId: "q", answer: { day: "2026-12-10", where: "neighbour" } }])).text(),
    );
    expect(resumed[0]).toMatchObject({ type: "run-start", agent: "shipping", resumed: true });
    expect(resumed.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Booked after the restart." });
  });
});

describe("requests to the user over the socket", () => {
  it("a question, a client tool and an elicitation answered by decision frames; a wrong answer is an error frame, and the request still waits", async () => {
    const hold = { toolCalls: [{ id: "h", name: "tracking_hold_at_depot", arguments: JSON.stringify({ orderId: "A1002" }) }] };
    const s = await scenario([transfer, redeliver, chooseSlot, hold, { text: "All set." }]);
    await chat(s.conversationId, s.tag("please redeliver order A1001"));
    const socket = await openSocket(s.conversationId);
    socket.send({ type: "decision", decisions: [{ toolCallId: "q", answer: { day: "someday", where: "locker" } }] });
    const error = await socket.until((f) => f.type === "error", "the refusal");
    expect(error.data).toMatchObject({ code: "invalid_answer" });
    socket.send({ type: "decision", decisions: [{ toolCallId: "q", answer: { day: "2026-12-08", where: "front door" } }] });
    const slot = await socket.until((f) => f.type === "input-required" && f.data.kind === "client-tool", "the client tool");
    expect(slot.data).toMatchObject({ toolCallId: "c", args: { slots } });
    // Sent as soon as the request is seen, before its leg has ended: the decision waits for that end.
    socket.send({ type: "decision", decisions: [{ toolCallId: "c", answer: { slot: slots[0] } }] });
    const form = await socket.until((f) => f.type === "input-required" && f.data.kind === "elicitation", "the elicitation");
    expect(form.data).toMatchObject({ toolCallId: "h", server: "tracking", mode: "form" });
    socket.send({ type: "decision", decisions: [{ toolCallId: "h", answer: { confirm: true, depot: "Bristol" } }] });
    await socket.until((f) => f.type === "done" && f.data.status === "completed", "the turn's end");
    const tools = (await stored(s.conversationId)).messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.toolCallId)).toEqual(["t", "q", "c", "h"]);
    expect(tools.at(-1)?.content).toBe("The parcel of order A1002 is held at the Bristol depot for collection.");
    socket.ws.close();
  });
});
