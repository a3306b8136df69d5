/**
 * The newest kind of request, a choice (`ctx.ask({ message, options, other })`: the demo's `choose_safe_place`), through
 * every way in, in workerd: the SSE API (listed in the view, an answer that is no option refused, its own words taken),
 * a restart while it waits, the socket's decision frame, `useChat`'s `addToolOutput`, A2A's decisions data part and
 * AG-UI's interrupt and resume entry; an operator may not answer it (the tool does not let one).
 */
import { env, exports } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { type BaseEvent, HttpAgent, type RunAgentInput } from "@ag-ui/client";
import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { TestChat } from "../support/ai-chat.ts";
import { openSocket } from "../support/socket.ts";
import { parseSse } from "../support/sse.ts";
import { until } from "../support/until.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const json = { "content-type": "application/json" };
const transfer = { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "delivery" }) }] };
const pick = { toolCalls: [{ id: "p", name: "choose_safe_place", arguments: JSON.stringify({ orderId: "A1002" }) }] };
const OPTIONS = ["Front door", "With a neighbour", "Parcel locker"];
const asked = {
  kind: "choice",
  toolCallId: "p",
  name: "choose_safe_place",
  agent: "shipping",
  message: "Where should the courier leave order A1002 when no one is home?",
  options: OPTIONS,
  other: "Somewhere else",
};

const decide = (id: string, decisions: unknown) =>
  call(`/v1/conversations/${id}/decisions`, { method: "POST", headers: json, body: JSON.stringify({ decisions }) });
const view = async (id: string) =>
  (await (await call(`/v1/conversations/${id}`)).json()) as { status: string; pendingRequests: Array<Record<string, unknown>> };
/** What the tool answered, as the conversation stored it. */
const placed = async (id: string) => (await stored(id)).messages.find((m) => m.role === "tool" && m.toolCallId === "p")?.content;

describe("a choice over the SSE API", () => {
  it("is listed as it was asked; an answer that is no option and no words is refused, and the request still waits", async () => {
    const s = await scenario([transfer, pick, { text: "Noted: the parcel locker." }]);
    const events = await chat(s.conversationId, s.tag("where should the courier leave my parcel A1002 if no one is home?"));
    expect(events.find((e) => e.type === "input-required")).toEqual({
      ...asked,
      args: { orderId: "A1002" },
      id: expect.any(Number),
      type: "input-required",
      sseEvent: "input-required",
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_input" });
    expect(await view(s.conversationId)).toMatchObject({ status: "awaiting_input", pendingRequests: [asked] });
    for (const wrong of [{ answer: "   " }, { answer: 7 }, { approved: true }]) {
      const refused = await decide(s.conversationId, [{ toolCallId: "p", ...wrong }]);
      expect([refused.status, ((await refused.json()) as { error: { code: string } }).error.code], JSON.stringify(wrong)).toEqual([
        400,
        "invalid_answer",
      ]);
    }
    // An operator may not answer it: the tool does not say one may.
    const asOperator = await env.CONVERSATIONS.getByName(s.conversationId).decide({ conversationId: s.conversationId, operator: true }, [
      { toolCallId: "p", answer: "Parcel locker" },
    ]);
    expect(asOperator).toMatchObject({ ok: false, error: { code: "answer_not_allowed" } });
    const resumed = parseSse(await (await decide(s.conversationId, [{ toolCallId: "p", answer: "Parcel locker" }])).text());
    expect(resumed.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Noted: the parcel locker." });
    expect(await placed(s.conversationId)).toBe(JSON.stringify({ orderId: "A1002", safePlace: "Parcel locker" }));
  });

  it("survives the object's restart while it waits, and takes the user's own words", async () => {
    const s = await scenario([transfer, pick, { text: "Behind the shed it is." }]);
    await chat(s.conversationId, s.tag("where should the courier leave my parcel A1002?"));
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    expect(await view(s.conversationId)).toMatchObject({ status: "awaiting_input", pendingRequests: [asked] });
    const resumed = parseSse(await (await decide(s.conversationId, [{ toolCallId: "p", answer: " behind the shed " }])).text());
    expect(resumed[0]).toMatchObject({ type: "run-start", agent: "shipping", resumed: true });
    expect(await placed(s.conversationId)).toBe(JSON.stringify({ orderId: "A1002", safePlace: "behind the shed" }));
  });
});

describe("a choice over the other ways in", () => {
  it("the socket: a decision frame with the option picked", async () => {
    const s = await scenario([transfer, pick, { text: "Front door, then." }]);
    await chat(s.conversationId, s.tag("where should the courier leave parcel A1002?"));
    const socket = await openSocket(s.conversationId);
    // The wait as the socket catches up on it.
    const request = await socket.until((f) => f.type === "input-required", "the choice");
    expect(request.data).toMatchObject(asked);
    socket.send({ type: "decision", decisions: [{ toolCallId: "p", answer: "Front door" }] });
    await socket.until((f) => f.type === "done" && f.data.status === "completed", "the turn's end");
    expect(await placed(s.conversationId)).toBe(JSON.stringify({ orderId: "A1002", safePlace: "Front door" }));
    socket.ws.close();
  });

  it("useChat: the choice is a data-request part, answered with addToolOutput", async () => {
    const s = await scenario([transfer, pick, { text: "With your neighbour, then." }]);
    const chat = new TestChat(s.conversationId);
    await chat.sendMessage({ text: s.tag("where should the courier leave my parcel A1002?") });
    type Part = UIMessage["parts"][number] & { toolCallId?: string; data?: Record<string, unknown> };
    const request = (chat.last.parts as Part[]).find((p) => p.type === "data-request");
    expect(request?.data).toMatchObject(asked);
    await chat.addToolOutput({ tool: "choose_safe_place", toolCallId: "p", output: "With a neighbour" });
    await until(
      async () => chat.last,
      () => chat.status === "ready" && chat.last.parts.some((p) => p.type === "text" && p.text.startsWith("With your neighbour")),
      "the turn's answer",
    );
    expect(await placed(s.conversationId)).toBe(JSON.stringify({ orderId: "A1002", safePlace: "With a neighbour" }));
  });

  it("A2A: the task is input-required with the choice, and a decisions data part answers it", async () => {
    const s = await scenario([transfer, pick, { text: "The parcel locker it is." }]);
    const rpc = async (method: string, params: unknown) => {
      const res = await call("/v1/a2a", {
        method: "POST",
        headers: { ...json, "a2a-version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      });
      return ((await res.json()) as { result: { task: { id: string; contextId: string; status: Record<string, unknown> } } }).result;
    };
    const text = s.tag("where should the courier leave my parcel A1002?");
    const { task } = await rpc("SendMessage", { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } });
    expect(task.status).toMatchObject({
      state: "TASK_STATE_INPUT_REQUIRED",
      message: { parts: [{ text: expect.stringContaining("choose_safe_place (choice)") }, { data: { pending: [asked] } }] },
    });
    const parts = [{ data: { decisions: [{ toolCallId: "p", answer: "Parcel locker" }] } }];
    const decided = await rpc("SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", taskId: task.id, contextId: task.contextId, parts },
    });
    expect(decided.task.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    expect(await placed(task.contextId)).toBe(JSON.stringify({ orderId: "A1002", safePlace: "Parcel locker" }));
  });

  it("AG-UI: an interrupt whose response schema is the options, resumed with the option picked", async () => {
    const s = await scenario([transfer, pick, { text: "Front door it is." }]);
    const agent = new HttpAgent({
      url: "https://chat.test/v1/ag-ui",
      threadId: s.conversationId,
      fetch: (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init)),
    });
    const run = async (more: Partial<RunAgentInput> = {}) => {
      const events: BaseEvent[] = [];
      await agent.runAgent({ runId: crypto.randomUUID(), ...more }, { onEvent: ({ event }) => void events.push(event) });
      return events.at(-1) as BaseEvent & { outcome?: { type: string; interrupts?: Array<Record<string, unknown>> } };
    };
    agent.addMessage({ id: "u1", role: "user", content: s.tag("where should the courier leave my parcel A1002?") });
    const finished = await run();
    const [interrupt] = finished.outcome!.interrupts!;
    expect(interrupt).toMatchObject({
      id: "p",
      reason: "input_required",
      message:
        "Where should the courier leave order A1002 when no one is home? (Front door / With a neighbour / Parcel locker / Somewhere else)",
      responseSchema: { type: "string", minLength: 1, examples: OPTIONS },
      metadata: { kind: "choice", tool: "choose_safe_place", options: OPTIONS, other: "Somewhere else" },
    });
    const resumed = await run({ resume: [{ interruptId: "p", status: "resolved", payload: "Front door" }] } as Partial<RunAgentInput>);
    expect(resumed.outcome).toEqual({ type: "success" });
    expect(await placed(s.conversationId)).toBe(JSON.stringify({ orderId: "A1002", safePlace: "Front door" }));
  });
});
