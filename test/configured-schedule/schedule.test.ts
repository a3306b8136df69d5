/**
 * Conversations that wait, through the Worker in workerd with real Durable Object alarms
 * (`runDurableObjectAlarm` runs a due alarm now): approvals expire after 2 s here and the support
 * desk has 2 s to answer (this project's bindings); follow-ups are scheduled by the shipping
 * agent's `schedule_followup` and made due by moving their time in the object's SQLite. Each
 * entry runs once, however often the alarm runs; rewind, fork and delete keep the schedule right.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it, vi } from "vitest";
import type { ConversationObject } from "../../src/cloudflare/index.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { openSocket } from "../support/socket.ts";
import { parseSse } from "../support/sse.ts";
import { until } from "../support/until.ts";
import { BUSY_RETRY_MS } from "../../src/conversation/storage/schedule.ts";
import { call, chat, type ConversationJson, dueFollowUp, postMessage, scenario } from "../support/worker.ts";

const stub = (id: string) => env.CONVERSATIONS.getByName(id);
// As stored: the desk's view keeps what was written for the agents (the customer's leaves system messages empty).
const view = async (id: string) =>
  (await (await call(`/v1/operator/conversations/${id}`)).json()) as ConversationJson & Record<string, unknown>;
const scheduled = async (id: string) =>
  ((await (await call(`/v1/conversations/${id}/schedule`)).json()) as { entries: Array<Record<string, unknown>> }).entries;

/** What the app's webhook (NOTIFY_URL) was told about a conversation, once `reason` is among it. */
async function toldApp(id: string, reason: string): Promise<Array<Record<string, unknown>>> {
  const told = await until(
    async () =>
      ((await (await fetch(`${inject("fakeOpenAIUrl")}/hooks/app`)).json()) as Array<{ body: string }>).filter((d) => d.body.includes(id)),
    (deliveries) => deliveries.some((d) => d.body.includes(`"${reason}"`)),
    `the app told ${reason}`,
  );
  return told.map((d) => JSON.parse(d.body) as Record<string, unknown>).filter((body) => body.reason === reason);
}

/** Makes every entry due now, as time passing would. */
async function makeDue(id: string): Promise<void> {
  await runInDurableObject(stub(id), async (_object, state) => {
    state.storage.sql.exec(`UPDATE schedule SET due_at = ?`, Date.now() - 1);
    await state.storage.setAlarm(Date.now() - 1);
  });
}

/** The view once the turn the deadline resumed has completed, after the alarm ran once more (and found nothing to do). */
async function resumedByTheAlarm(id: string) {
  await until(
    () => view(id),
    (v) => v.status === "completed",
    "the resumed turn",
  );
  await runDurableObjectAlarm(stub(id));
  return view(id);
}

/** Gives calls of the waiting step (by index) deadlines, as their tools' own `approvalExpiresIn` would have; the object starts again from storage. */
async function storeDeadline(id: string, deadlines: Record<number, string>): Promise<void> {
  await runInDurableObject(stub(id), (_o, state) => {
    for (const [index, at] of Object.entries(deadlines))
      state.storage.sql.exec(
        `UPDATE runs SET state = json_set(state, '$.suspension.pending[${index}].expiresAt', ?) WHERE path = '' AND decisions IS NOT NULL`,
        at,
      );
  });
  await evictDurableObject(stub(id));
}

/** The user approves one call of the conversation's waiting step. */
const approve = (id: string, toolCallId: string) =>
  call(`/v1/conversations/${id}/approvals`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decisions: [{ toolCallId, approved: true }] }),
  });

const transfer = (to: string, reason = "r") => ({
  toolCalls: [{ id: `t-${to}`, name: `transfer_to_${to}`, arguments: JSON.stringify({ reason }) }],
});

describe("approval deadlines", () => {
  it("decline an undecided call with reason expired when its deadline passes, and the turn resumes as its agent, once", async () => {
    const s = await scenario([
      transfer("billing"),
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Your refund request expired; ask again when you are ready." },
    ]);
    const started = Date.now();
    const events = await chat(s.conversationId, s.tag("refund A1001"));
    const required = events.find((e) => e.type === "approval-required") as { expiresAt?: string } | undefined;
    expect(Date.parse(required!.expiresAt!) - started).toBeGreaterThanOrEqual(1_500);
    expect(Date.parse(required!.expiresAt!) - started).toBeLessThanOrEqual(3_000);
    const waiting = await view(s.conversationId);
    expect((waiting.pendingApprovals[0] as { expiresAt?: string }).expiresAt).toBe(required!.expiresAt);
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "request-expiry", dueAt: required!.expiresAt }]);

    // The alarm fires by itself at the deadline; running it again after finds nothing to do.
    const after = await resumedByTheAlarm(s.conversationId);
    const result = after.messages.find((m) => m.role === "tool" && m.toolCallId === "rf");
    expect(result).toMatchObject({ isError: true, content: expect.stringMatching(/expired and did not run/) });
    expect(after.messages.at(-1)).toMatchObject({ role: "assistant", agent: "billing", content: expect.stringMatching(/expired/) });
    expect(after.activity).toMatchObject([{ kind: "expired", agent: "billing", toolCallId: "rf", tool: "refund" }]);
    expect((await s.sent()).requests).toHaveLength(3);
    expect(await scheduled(s.conversationId)).toEqual([]);
    // Whoever followed reads the resumed leg as it ran: a run-start that says it resumed, then the answer.
    const replay = await (await call(`/v1/conversations/${s.conversationId}/events`, { headers: { "last-event-id": "0" } })).text();
    expect(replay.match(/"resumed":true/g)).toHaveLength(1);
  });

  it("of two calls in one step, expire the undecided one only: the one decided in time runs as decided, and the turn resumes once", async () => {
    const s = await scenario([
      transfer("billing"),
      {
        toolCalls: [
          { id: "r1", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) },
          { id: "r2", name: "refund", arguments: JSON.stringify({ orderId: "A1002", amountUsd: 20 }) },
        ],
      },
      { text: "One refund done; the other expired." },
    ]);
    await chat(s.conversationId, s.tag("refund both orders"));
    const decided = await approve(s.conversationId, "r1");
    // The other call still waits: nothing resumes yet.
    expect(decided.status).toBe(202);
    await decided.text();
    expect(await view(s.conversationId)).toMatchObject({ status: "awaiting_approval", activity: [{ kind: "approved", toolCallId: "r1" }] });
    const after = await resumedByTheAlarm(s.conversationId);
    const results = Object.fromEntries(after.messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m] as const] : [])));
    expect(results.r1).toMatchObject({ isError: false, approval: { approved: true } });
    expect(JSON.parse(results.r1!.content)).toMatchObject({ orderId: "A1001", refundedUsd: 10, status: "refunded" });
    expect(results.r2).toMatchObject({ isError: true, content: expect.stringMatching(/expired and did not run/) });
    expect(after.pendingApprovals).toEqual([]);
    expect(after.activity).toMatchObject([
      { kind: "approved", toolCallId: "r1" },
      { kind: "expired", toolCallId: "r2" },
    ]);
    // One resumed leg, one model call for it.
    expect((await s.sent()).requests).toHaveLength(3);
    const replay = await (await call(`/v1/conversations/${s.conversationId}/events`, { headers: { "last-event-id": "0" } })).text();
    expect(replay.match(/"resumed":true/g)).toHaveLength(1);
    expect(await scheduled(s.conversationId)).toEqual([]);
  });

  it("of calls with different deadlines (a tool's own approvalExpiresIn), expire each at its own: the turn waits for the last, then resumes once", async () => {
    const refund = (id: string, orderId: string) => ({ id, name: "refund", arguments: JSON.stringify({ orderId, amountUsd: 10 }) });
    const s = await scenario([
      transfer("billing"),
      { toolCalls: [refund("r1", "A1001"), refund("r2", "A1002"), refund("r3", "A1003")] },
      { text: "The refunds expired." },
    ]);
    await chat(s.conversationId, s.tag("refund three orders"));
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    await storeDeadline(s.conversationId, { 1: new Date(Date.now() + 7_200_000).toISOString(), 2: inAnHour });
    // The first deadline passes by itself: r1 is declined, r2 and r3 still wait, and the entry moves to the sooner of theirs.
    await until(
      () => view(s.conversationId),
      (v) => (v.activity as unknown[]).length === 1,
      "the first expiry",
    );
    const waiting = await view(s.conversationId);
    expect(waiting).toMatchObject({ status: "awaiting_approval", activity: [{ kind: "expired", toolCallId: "r1" }] });
    expect(waiting.pendingApprovals.map((p) => p.toolCallId)).toEqual(["r2", "r3"]);
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "request-expiry", dueAt: inAnHour }]);
    expect((await s.sent()).requests).toHaveLength(2);
    // Then theirs pass too.
    const past = new Date(Date.now() - 1).toISOString();
    await storeDeadline(s.conversationId, { 1: past, 2: past });
    await makeDue(s.conversationId);
    const after = await resumedByTheAlarm(s.conversationId);
    expect(after.messages.filter((m) => m.role === "tool").map((m) => [m.toolCallId, m.isError])).toEqual([
      ["t-billing", false],
      ["r1", true],
      ["r2", true],
      ["r3", true],
    ]);
    expect((after.activity as Array<{ toolCallId: string }>).map((a) => a.toolCallId).sort()).toEqual(["r1", "r2", "r3"]);
    expect((await s.sent()).requests).toHaveLength(3);
    expect(await scheduled(s.conversationId)).toEqual([]);
  });

  it("are dropped with nothing left to do: a deadline before any call's, or one whose step no longer waits", async () => {
    const s = await scenario([
      transfer("billing"),
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Refunded." },
    ]);
    await chat(s.conversationId, s.tag("refund A1001"));
    const [deadline] = await scheduled(s.conversationId);
    const early = await runInDurableObject(stub(s.conversationId), async (_o, state) => {
      const entry = new ConversationStore(state.storage).schedule.add({ kind: "request-expiry", dueAt: Date.now() - 1 });
      await state.storage.setAlarm(Date.now() + 3_600_000);
      return entry.id;
    });
    await runDurableObjectAlarm(stub(s.conversationId));
    // The early entry goes; the call's own deadline stays, and the call still waits.
    expect((await scheduled(s.conversationId)).map((e) => e.id)).toEqual([deadline!.id]);
    expect(early).not.toBe(deadline!.id);
    expect(await view(s.conversationId)).toMatchObject({ status: "awaiting_approval", activity: [] });
    (await approve(s.conversationId, "rf")).body?.cancel();
    await until(
      () => view(s.conversationId),
      (v) => v.status === "completed",
      "the approved turn",
    );
    // Once the step no longer waits, a deadline left behind (as a crash could leave one) goes too, with no turn.
    const person = { kind: "person-timeout", dueAt: Date.now() - 1, person: "support-desk", handedBy: "triage" } as const;
    await runInDurableObject(stub(s.conversationId), async (_o, state) => {
      const { schedule } = new ConversationStore(state.storage);
      schedule.add({ kind: "request-expiry", dueAt: Date.now() - 1 });
      schedule.add(person);
      schedule.add({ ...person, person: "a desk no longer in the network" });
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    await runDurableObjectAlarm(stub(s.conversationId));
    expect(await scheduled(s.conversationId)).toEqual([]);
    expect(await view(s.conversationId)).toMatchObject({ status: "completed", activeAgent: "billing" });
    expect((await s.sent()).requests).toHaveLength(3);
  });

  it("leave a call decided in time alone: the deadline's entry goes with the decision", async () => {
    const s = await scenario([
      transfer("billing"),
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Refunded." },
    ]);
    await chat(s.conversationId, s.tag("refund A1001"));
    const decided = await approve(s.conversationId, "rf");
    await decided.text();
    expect(await scheduled(s.conversationId)).toEqual([]);
    // What is left is the app's notification, delivered by the alarm; then no alarm is set.
    await until(
      () => runInDurableObject(stub(s.conversationId), (_o, state) => state.storage.getAlarm()),
      (alarm) => alarm === null,
      "no alarm",
    );
  });
});

describe("a person's deadline", () => {
  it("gives the conversation back to the agent that handed it over, which answers the user; the desk drops it", async () => {
    const s = await scenario([transfer("support_desk", "wants a person"), { text: "Sorry, no one was free. How can I help?" }]);
    await chat(s.conversationId, s.tag("a person, please"));
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "person-timeout", person: "support-desk", handedBy: "triage" }]);
    await until(
      () => view(s.conversationId),
      (v) => v.activeAgent === "triage",
      "the hand back",
    );
    await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.role === "assistant",
      "the agent's answer",
    );
    const after = await view(s.conversationId);
    expect(after.messages.slice(-3).map((m) => [m.role, m.content])).toEqual([
      ["system", "The person at 'support-desk' handed the conversation back to 'triage': No one answered in time."],
      ["system", expect.stringMatching(/^No one at 'support-desk' answered in time/)],
      ["assistant", "Sorry, no one was free. How can I help?"],
    ]);
    expect(after.activity).toMatchObject([
      { kind: "timed-out", agent: "support-desk", to: "triage" },
      { kind: "handed-back", agent: "support-desk", to: "triage" },
    ]);
    expect((after.activity as Array<{ by?: unknown }>)[1]!.by).toBeUndefined();
    const desk = (await (await call("/v1/operator/conversations")).json()) as { conversations: Array<{ conversationId: string }> };
    expect(desk.conversations.map((c) => c.conversationId)).not.toContain(s.conversationId);
    expect(await toldApp(s.conversationId, "person_timed_out")).toMatchObject([{ person: "support-desk", to: "triage" }]);
    await runDurableObjectAlarm(stub(s.conversationId));
    expect((await s.sent()).requests).toHaveLength(2);
  });

  it("is the agent that handed over to the person, not the first to hand over in the same turn", async () => {
    const s = await scenario([
      transfer("billing"),
      { text: "Billing here." },
      transfer("triage", "wants a person"),
      transfer("support_desk", "wants a person"),
      // For the hand back when the deadline passes after the test.
      { text: "No one was free." },
    ]);
    await chat(s.conversationId, s.tag("my invoice"));
    await chat(s.conversationId, "actually, a person please");
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "person-timeout", person: "support-desk", handedBy: "triage" }]);
  });

  it("goes when the person hands back before it: nothing is scheduled, and the hand back is stored as an event, spending no handoff budget", async () => {
    const s = await scenario([transfer("support_desk", "wants a person")]);
    await chat(s.conversationId, s.tag("a person, please"));
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "person-timeout" }]);
    const back = await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ to: "triage", note: "sorted by phone" }),
    });
    expect(await back.json()).toEqual({ activeAgent: "triage" });
    expect(await scheduled(s.conversationId)).toEqual([]);
    const after = await view(s.conversationId);
    // Only the transfer to the person counts (docs/handoffs.md, "What each kind of change of hands counts").
    expect(after).toMatchObject({ activeAgent: "triage", handoffCount: 1 });
    const replay = parseSse(
      await (await call(`/v1/conversations/${s.conversationId}/events`, { headers: { "last-event-id": "0" } })).text(),
    );
    expect(replay.at(-1)).toMatchObject({ id: after.lastEventId, type: "handoff", kind: "hand-back", from: "support-desk", to: "triage" });
  });

  it("is met when a person answers in time: nothing is scheduled after their first answer", async () => {
    const s = await scenario([transfer("support_desk", "wants a person")]);
    await chat(s.conversationId, s.tag("a person, please"));
    // The desk's card shows the deadline the schedule keeps, for a guest (no one signed in).
    const { conversations } = (await (await call("/v1/operator/conversations")).json()) as {
      conversations: Array<Record<string, unknown>>;
    };
    const card = conversations.find((c) => c.conversationId === s.conversationId)!;
    const { entries } = (await (await call(`/v1/conversations/${s.conversationId}/schedule`)).json()) as {
      entries: Array<{ dueAt: string }>;
    };
    expect(card).toMatchObject({ status: "waiting", title: expect.stringMatching(/^a person, please/) });
    expect(card).not.toHaveProperty("user");
    expect(card.answerBy).toBe(Date.parse(entries[0]!.dueAt));
    const answered = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "Sam here." }),
    });
    expect(answered.status).toBe(200);
    expect(await scheduled(s.conversationId)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    expect((await view(s.conversationId)).activeAgent).toBe("support-desk");
  });
});

describe("follow-ups an agent schedules", () => {
  const followUp = (inMinutes: number) => ({
    toolCalls: [{ id: `f${inMinutes}`, name: "schedule_followup", arguments: JSON.stringify({ inMinutes, note: "Check parcel A1002." }) }],
  });

  it("run a turn of whoever holds the conversation when due, with the note, once however often the alarm runs", async () => {
    const s = await scenario([
      transfer("shipping"),
      followUp(30),
      { text: "I will check in 30 minutes." },
      { text: "It has left the depot." },
    ]);
    const before = Date.now();
    await chat(s.conversationId, s.tag("where is A1002? check again in 30 minutes"));
    const [entry] = await scheduled(s.conversationId);
    expect(entry).toMatchObject({ kind: "follow-up", agent: "shipping", note: "Check parcel A1002.", toolCallId: "f30" });
    expect(Date.parse(entry!.dueAt as string) - before).toBeGreaterThanOrEqual(30 * 60_000);
    // Due now: the alarm fires by itself and is run here too, twice; the follow-up runs once, and an open socket sees it.
    const socket = await openSocket(s.conversationId, `?after=${(await view(s.conversationId)).lastEventId}`);
    await makeDue(s.conversationId);
    await runDurableObjectAlarm(stub(s.conversationId));
    await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "It has left the depot.",
      "the follow-up",
    );
    await runDurableObjectAlarm(stub(s.conversationId));
    const sent = (await s.sent()).requests;
    expect(sent).toHaveLength(4);
    expect(sent[3]!.messages.at(-1)).toMatchObject({
      role: "system",
      content: expect.stringMatching(/^A follow-up 'shipping' scheduled for .* is due: Check parcel A1002\.$/),
    });
    const after = await view(s.conversationId);
    expect(after.messages.at(-1)).toMatchObject({ role: "assistant", agent: "shipping", content: "It has left the depot." });
    expect(after.turn).toBe(2);
    expect(await toldApp(s.conversationId, "follow_up_answered")).toMatchObject([
      { agent: "shipping", note: "Check parcel A1002.", holder: "shipping" },
    ]);
    await socket.until((f) => f.type === "done", "the follow-up's end on the socket");
    expect(socket.frames.map((f) => f.type)).toEqual([
      "run-start",
      "step-start",
      ...socket.frames.slice(2, -2).map(() => "text-delta"),
      "step-finish",
      "done",
    ]);
    expect(socket.frames[0]!.data).toMatchObject({ agent: "shipping", scheduled: true });
    socket.ws.close();
    // A retry runs the scheduled turn again, with its note (it has no user message to run again).
    const retried = await call(`/v1/conversations/${s.conversationId}/retry`, { method: "POST" });
    expect(retried.status).toBe(200);
    expect(await retried.text()).toContain('"scheduled":true');
    const again = (await s.sent()).requests[4]!;
    expect(again.messages.at(-1)).toMatchObject({ role: "system", content: expect.stringMatching(/is due: Check parcel A1002\.$/) });
    expect((await view(s.conversationId)).messages.filter((m) => m.role === "system" && /is due/.test(String(m.content)))).toHaveLength(1);
    expect(await scheduled(s.conversationId)).toEqual([]);
  });

  it("wait for a turn that is running when they are due: the alarm tries again 2 s on, and the follow-up runs once after the turn", async () => {
    const s = await scenario([{ text: "A slow answer, word by word.", holdAfter: 1 }, { text: "Checked in." }]);
    const sent = await postMessage(s.conversationId, s.tag("take your time"));
    const reader = sent.body!.getReader();
    await reader.read();
    const stub = await dueFollowUp(s.conversationId, "triage");
    const [due] = await scheduled(s.conversationId);
    const rang = Date.now();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // Nothing ran and nothing moved: the entry waits as it was, and the alarm rings again once the wait is over.
    expect(await scheduled(s.conversationId)).toEqual([due]);
    const alarm = await runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    expect(alarm! - rang).toBeGreaterThanOrEqual(BUSY_RETRY_MS - 100);
    expect(alarm! - rang).toBeLessThanOrEqual(BUSY_RETRY_MS + 1_000);
    await s.release();
    while (!(await reader.read()).done);
    await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "Checked in.",
      "the follow-up, by the alarm's second ring",
    );
    expect((await s.sent()).requests).toHaveLength(2);
    expect(await scheduled(s.conversationId)).toEqual([]);
  });

  it("are refused outside the bounds as error results, listed, and cancelled with DELETE", async () => {
    const s = await scenario([transfer("shipping"), followUp(0.5), followUp(60), { text: "Scheduled for an hour from now." }]);
    const events = await chat(s.conversationId, s.tag("check again soon"));
    const results = events.filter((e) => e.type === "tool-result") as Array<{ toolCallId: string; isError: boolean; result: unknown }>;
    expect(results.find((r) => r.toolCallId === "f0.5")).toMatchObject({
      isError: true,
      result: "Tool 'schedule_followup' failed: A follow-up must be at least 1 minute(s) from now.",
    });
    expect(results.find((r) => r.toolCallId === "f60")).toMatchObject({ isError: false });
    const [entry] = await scheduled(s.conversationId);
    expect(await runInDurableObject(stub(s.conversationId), (_o, state) => state.storage.getAlarm())).toBe(
      Date.parse(entry!.dueAt as string),
    );
    const unknown = await call(`/v1/conversations/${s.conversationId}/schedule/nope`, { method: "DELETE" });
    expect([unknown.status, ((await unknown.json()) as { error: { code: string } }).error.code]).toEqual([404, "schedule_entry_not_found"]);
    const cancelled = await call(`/v1/conversations/${s.conversationId}/schedule/${entry!.id}`, { method: "DELETE" });
    expect(await cancelled.json()).toEqual({ cancelled: 1 });
    expect(await scheduled(s.conversationId)).toEqual([]);
    // What is left is the app's notification, delivered by the alarm; then no alarm is set.
    await until(
      () => runInDurableObject(stub(s.conversationId), (_o, state) => state.storage.getAlarm()),
      (alarm) => alarm === null,
      "no alarm",
    );
  });

  it("hold their bounds exactly: one minute and 366 days are allowed, a moment outside is refused, and so is a 21st waiting", async () => {
    const at = (id: string, inMinutes: number) => ({
      id,
      name: "schedule_followup",
      arguments: JSON.stringify({ inMinutes, note: `Check ${id}.` }),
    });
    const s = await scenario([
      transfer("shipping"),
      {
        toolCalls: [
          at("soonest", 1),
          at("latest", 366 * 1_440),
          at("too-late", 366 * 1_440 + 0.5),
          ...Array.from({ length: 18 }, (_, i) => at(`more-${i}`, 60 + i)),
          at("one-too-many", 90),
        ],
      },
      { text: "Scheduled." },
    ]);
    // A clock that moves on at every reading, as a loaded machine's may between the tool's reading and the schedule's.
    const real = Date.now.bind(Date);
    let ticks = 0;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => real() + ticks++);
    const events = await chat(s.conversationId, s.tag("check often")).finally(() => clock.mockRestore());
    const results = Object.fromEntries(
      events.flatMap((e) => (e.type === "tool-result" ? [[e.toolCallId, e] as const] : [])) as Array<
        readonly [string, { isError: boolean; result: unknown }]
      >,
    );
    expect(results["too-late"]).toMatchObject({
      isError: true,
      result: "Tool 'schedule_followup' failed: A follow-up can be at most 366 days from now.",
    });
    expect(results["one-too-many"]).toMatchObject({
      isError: true,
      result: "Tool 'schedule_followup' failed: This conversation already has 20 follow-ups waiting (at most 20).",
    });
    const entries = await scheduled(s.conversationId);
    expect(entries).toHaveLength(20);
    const soonest = entries.find((e) => e.toolCallId === "soonest")!;
    const latest = entries.find((e) => e.toolCallId === "latest")!;
    // Each call reads the clock as it runs (a step's calls may be a few ms apart).
    const apart = Date.parse(latest.dueAt as string) - Date.parse(soonest.dueAt as string);
    expect(apart - (366 * 86_400_000 - 60_000)).toBeGreaterThanOrEqual(0);
    expect(apart - (366 * 86_400_000 - 60_000)).toBeLessThan(1_000);
    // The model reads where its follow-up went: the entry's id and time.
    expect(results.soonest).toMatchObject({ isError: false, result: { scheduled: true, id: soonest.id, at: soonest.dueAt } });
  });

  it("are cancelled all at once by DELETE …/schedule, which leaves a person's deadline alone", async () => {
    const s = await scenario([
      transfer("shipping"),
      followUp(30),
      { text: "Scheduled." },
      transfer("triage", "wants a person"),
      transfer("support_desk", "wants a person"),
      // For the hand back when the person's deadline passes after the test.
      { text: "No one was free." },
    ]);
    await chat(s.conversationId, s.tag("check again in 30 minutes"));
    await chat(s.conversationId, "actually, a person please");
    expect((await scheduled(s.conversationId)).map((e) => e.kind).sort()).toEqual(["follow-up", "person-timeout"]);
    const cancel = async () => (await call(`/v1/conversations/${s.conversationId}/schedule`, { method: "DELETE" })).json();
    expect(await cancel()).toEqual({ cancelled: 1 });
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "person-timeout" }]);
    expect(await cancel()).toEqual({ cancelled: 0 });
  });

  it("due while a step waits for approval are put off five minutes, and the approval's deadline keeps its time", async () => {
    const s = await scenario([
      transfer("billing"),
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "The refund expired." },
    ]);
    await chat(s.conversationId, s.tag("refund A1001"));
    const [expiry] = await scheduled(s.conversationId);
    const stub = await dueFollowUp(s.conversationId, "billing");
    const rang = Date.now();
    await runDurableObjectAlarm(stub);
    const entries = await scheduled(s.conversationId);
    expect(entries.find((e) => e.kind === "request-expiry")).toEqual(expiry);
    const put = Date.parse(entries.find((e) => e.kind === "follow-up")!.dueAt as string) - rang;
    expect(put).toBeGreaterThanOrEqual(5 * 60_000);
    expect(put).toBeLessThan(5 * 60_000 + 2_000);
    expect((await s.sent()).requests).toHaveLength(2);
    await resumedByTheAlarm(s.conversationId);
  });

  it("go with a rewound turn, are not inherited by a fork, and leave no alarm after a delete", async () => {
    const s = await scenario([transfer("shipping"), followUp(30), { text: "Scheduled." }, { text: "Retried without a follow-up." }]);
    await chat(s.conversationId, s.tag("check again in 30 minutes"));
    expect(await scheduled(s.conversationId)).toHaveLength(1);
    const fork = await call(`/v1/conversations/${s.conversationId}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ afterTurn: 1 }),
    });
    const forked = ((await fork.json()) as { id: string }).id;
    expect(await scheduled(forked)).toEqual([]);
    const retried = await call(`/v1/conversations/${s.conversationId}/retry`, { method: "POST" });
    await retried.text();
    expect(await scheduled(s.conversationId)).toEqual([]);

    const s2 = await scenario([transfer("shipping"), followUp(30), { text: "Scheduled." }]);
    await chat(s2.conversationId, s2.tag("check again in 30 minutes"));
    await until(
      () => scheduled(s2.conversationId),
      (entries) => entries.length === 1,
      "only the follow-up",
    );
    expect((await call(`/v1/conversations/${s2.conversationId}`, { method: "DELETE" })).status).toBe(204);
    expect(await runInDurableObject(stub(s2.conversationId), (_o, state) => state.storage.getAlarm())).toBeNull();
  });
});

describe("a write that fails after a turn's end is stored", () => {
  it("leaves the turn as it ended: its stream says it waits for approval, and so does the turn", async () => {
    const s = await scenario([
      transfer("billing"),
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
    ]);
    const events = await runInDurableObject(stub(s.conversationId), async (instance, state) => {
      const { sql } = state.storage;
      const exec = sql.exec;
      // The approval's deadline is written after the turn's end: that write fails.
      (sql as unknown as Record<string, unknown>).exec = (query: string, ...bindings: SqlStorageValue[]) => {
        if (/INSERT INTO schedule/.test(query)) throw new Error("disk full");
        return exec.call(sql, query, ...bindings);
      };
      try {
        const conversation = instance as unknown as ConversationObject;
        const result = await conversation.sendMessage({ conversationId: s.conversationId }, s.tag("refund A1001"));
        return result.ok ? parseSse(await new Response(result.value.events).text()) : [];
      } finally {
        delete (sql as unknown as Record<string, unknown>).exec;
      }
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval" });
    const turns = (await (await call(`/v1/conversations/${s.conversationId}/turns`)).json()) as Array<{ status: string }>;
    expect(turns.map((t) => t.status)).toEqual(["awaiting_approval"]);
    expect((await view(s.conversationId)).pendingApprovals).toMatchObject([{ toolCallId: "rf" }]);
  });
});

describe("deadlines of every kind of request", () => {
  it("expire a question no one answered: the call is answered so without running again, and the turn resumes as its agent", async () => {
    const s = await scenario([
      transfer("shipping"),
      { toolCalls: [{ id: "q", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1001" }) }] },
      { text: "No answer came, so nothing was booked." },
    ]);
    const events = await chat(s.conversationId, s.tag("please redeliver order A1001"));
    const asked = events.find((e) => e.type === "input-required") as { expiresAt?: string } | undefined;
    expect(asked).toMatchObject({ kind: "question", toolCallId: "q" });
    expect(await scheduled(s.conversationId)).toMatchObject([{ kind: "request-expiry", dueAt: asked!.expiresAt }]);
    const after = await resumedByTheAlarm(s.conversationId);
    expect(after.messages.find((m) => m.role === "tool" && m.toolCallId === "q")).toMatchObject({
      isError: true,
      content: "The user did not answer before the deadline: the request expired.",
    });
    expect(after.messages.at(-1)).toMatchObject({
      role: "assistant",
      agent: "shipping",
      content: "No answer came, so nothing was booked.",
    });
    expect(after.activity).toMatchObject([{ kind: "expired", toolCallId: "q", tool: "arrange_redelivery" }]);
  });
});
