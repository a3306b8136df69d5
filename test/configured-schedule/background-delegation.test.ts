/**
 * Background delegations (`asTool({ background: true })`) through the Worker in workerd, with real
 * Durable Object alarms and the fake provider: shipping's `search_for_parcel` starts the demo's
 * parcel search. The call answers at once; the search runs from the conversation's alarm, stored
 * step by step and told to open sockets as it goes; its result comes back as a follow-up turn of
 * shipping's, once, across restarts (the object aborted mid-run); deleting the conversation stops it.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ConversationObject } from "../../src/cloudflare/index.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { openSocket } from "../support/socket.ts";
import { until } from "../support/until.ts";
import { parseSse } from "../support/sse.ts";
import { call, chat, type ConversationJson, scenario } from "../support/worker.ts";

type Scenario = Awaited<ReturnType<typeof scenario>>;

const stub = (id: string) => env.CONVERSATIONS.getByName(id);
// As stored: the desk's view keeps what was written for the agents (the customer's leaves system messages empty).
const view = async (id: string) =>
  (await (await call(`/v1/operator/conversations/${id}`)).json()) as ConversationJson & Record<string, unknown>;
const scheduled = async (id: string) =>
  ((await (await call(`/v1/conversations/${id}/schedule`)).json()) as { entries: Array<Record<string, unknown>> }).entries;

const transfer = { toolCalls: [{ id: "t-shipping", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost parcel" }) }] };
type Tag = (message: string) => string;
/** Shipping starts the search; the request carries the scenario's tag, so the fake provider knows the search's calls. */
const startSearch = (tag: Tag) => ({
  toolCalls: [{ id: "bg1", name: "search_for_parcel", arguments: JSON.stringify({ request: tag("Find the parcel of order A1002") }) }],
});
const lookup = { toolCalls: [{ id: "l1", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1002" }) }] };
/** The search asks the customer when and where to redeliver the parcel (a question it waits on). */
const redeliver = { toolCalls: [{ id: "rd1", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1002" }) }] };

/** Answers the redelivery question (`rd1`) over HTTP. */
const answerRedelivery = (conversationId: string, answer: unknown) =>
  call(`/v1/conversations/${conversationId}/decisions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decisions: [{ toolCallId: "rd1", answer }] }),
  });

/** Waits until what the fake provider was sent for the scenario satisfies `ok`. */
const providerSaw = (s: { sent: Scenario["sent"] }, ok: (sent: Awaited<ReturnType<Scenario["sent"]>>) => boolean, what: string) =>
  until(() => s.sent(), ok, what);

/** Makes every entry due now and runs the alarm, as time passing would. */
async function ring(id: string): Promise<void> {
  await runInDurableObject(stub(id), async (_object, state) => {
    state.storage.sql.exec(`UPDATE schedule SET due_at = ?`, Date.now() - 1);
    await state.storage.setAlarm(Date.now() - 1);
  });
  await runDurableObjectAlarm(stub(id));
}

/** The object goes away as a crashed process would: what it was doing stops where it was, and the next request starts it again. */
async function restart(id: string): Promise<void> {
  await runInDurableObject(stub(id), (_object, state) => state.abort("restart")).catch(() => {});
}

/** What the object stored of the background run: the search's history and its run row. */
function storedRun(id: string, turn: number) {
  return runInDurableObject(stub(id), (_object: ConversationObject, state) => {
    const store = new ConversationStore(state.storage);
    const row = state.storage.sql
      .exec<{ status: string; model_calls: number }>(`SELECT status, model_calls FROM runs WHERE mode = 'background'`)
      .toArray();
    return { history: store.delegation(turn, ["bg1"]), runs: row };
  });
}

const notes = (v: ConversationJson) => v.messages.filter((m) => m.role === "system" && /asked in the background/.test(String(m.content)));

describe("a background delegation", () => {
  it("answers at once, runs from the alarm beside the conversation, and brings its result as a follow-up turn of the agent that asked, once", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "I have started a search." },
      // The search's first call waits until the socket is open.
      { ...lookup, holdAfter: 0 },
      { text: "It is at the Arlington depot." },
      { text: "Good news: it is at the Arlington depot." },
    ]);
    const events = await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    // The call answered that the work started; the turn ended without waiting for it.
    const started = events.find((e) => e.type === "tool-result" && e.toolCallId === "bg1");
    expect(started).toMatchObject({ isError: false, result: { started: true, agent: "parcel-search" } });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "I have started a search." });
    expect(events.some((e) => e.type === "delegated")).toBe(false);
    expect(await scheduled(s.conversationId)).toMatchObject([
      { kind: "delegation", agent: "parcel-search", askedBy: "shipping", toolCallId: "bg1" },
    ]);
    expect((await view(s.conversationId)).background).toMatchObject([
      { agent: "parcel-search", toolCallId: "bg1", turn: 1, status: expect.stringMatching(/^(waiting|running)$/) },
    ]);

    // Due at once, the alarm starts it by itself.
    await providerSaw(s, (sent) => sent.requests.length === 4, "the search's first model call, from the alarm");
    const socket = await openSocket(s.conversationId, `?after=${(await view(s.conversationId)).lastEventId}`);
    await s.release();
    const after = await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "Good news: it is at the Arlington depot.",
      "the follow-up with the search's result",
    );
    // More rings find nothing to do: the result came once.
    await ring(s.conversationId);
    await runDurableObjectAlarm(stub(s.conversationId));
    const sent = (await s.sent()).requests;
    expect(sent).toHaveLength(6);
    // The search ran on a fresh context with only the request, as the parcel search.
    expect(sent[3]!.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([`Find the parcel of order A1002 [${s.id}]`]);
    expect(sent[3]!.messages[0]!.content).toMatch(/You search for a lost parcel/);
    expect(sent[5]!.messages.at(-1)).toMatchObject({
      role: "system",
      content: "'parcel-search', which shipping asked in the background (call bg1), has finished: It is at the Arlington depot.",
    });
    expect(notes(after)).toHaveLength(1);
    expect(after.messages.at(-1)).toMatchObject({ role: "assistant", agent: "shipping" });
    expect(after.turn).toBe(2);
    expect(await scheduled(s.conversationId)).toEqual([]);
    expect(after.background).toMatchObject([
      { agent: "parcel-search", toolCallId: "bg1", status: "completed", startedAt: expect.any(String), endedAt: expect.any(String) },
    ]);
    // Its steps are in its own history, under the turn that asked; none is in the conversation's.
    const run = await storedRun(s.conversationId, 1);
    expect(run.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    const read = await (await call(`/v1/conversations/${s.conversationId}/turns/1/delegations`)).json();
    expect(read).toEqual({ delegations: [{ path: ["bg1"], agent: "parcel-search", messages: run.history }] });
    expect(await (await call(`/v1/conversations/${s.conversationId}/turns/2/delegations`)).json()).toEqual({ delegations: [] });
    expect((await call(`/v1/conversations/${s.conversationId}/turns/3/delegations`)).status).toBe(404);
    expect(run.runs).toEqual([{ status: "completed", model_calls: 2 }]);
    expect(after.messages.some((m) => m.content === "It is at the Arlington depot.")).toBe(false);
    // What it spent counts toward the conversation's spending: 3 calls of turn 1, the search's 2, the follow-up's 1.
    expect((after as { usage: { modelCalls: number } }).usage.modelCalls).toBe(6);
    // An open socket saw the search as it went, nested under the call (frames with no id: no turn's log holds them).
    const live = socket.frames.filter((f) => f.type === "delegated");
    expect(live.length).toBeGreaterThan(3);
    expect(live.every((f) => f.id === undefined && (f.data as { path: string[] }).path.join() === "bg1")).toBe(true);
    expect(live.map((f) => (f.data as { event: { type: string } }).event.type)).toEqual(
      expect.arrayContaining(["tool-call", "tool-result", "step-start", "text-delta", "done"]),
    );
    expect(live.every((f) => (f.data as { agent: string }).agent === "parcel-search")).toBe(true);
    await socket.until((f) => f.type === "done", "the follow-up turn on the socket");
    socket.ws.close();
    // A fork after turn 1 spends as the conversation had: its turn's 3 calls and the search's 2; nothing is scheduled in it.
    const fork = await call(`/v1/conversations/${s.conversationId}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ afterTurn: 1 }),
    });
    const forked = ((await fork.json()) as { id: string }).id;
    expect(((await view(forked)) as { usage: { modelCalls: number } }).usage.modelCalls).toBe(5);
    expect(await scheduled(forked)).toEqual([]);
  });

  it("cut off by a restart is ended as interrupted, and the agent that asked is told so once", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      { ...lookup, holdAfter: 0 },
      { text: "Sorry, it was interrupted." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    // The search's first model call hangs; the object goes away under it.
    await ring(s.conversationId);
    await providerSaw(s, (sent) => sent.requests.length === 4, "the search's first model call");
    await restart(s.conversationId);
    await s.release();
    // Its lease runs out: the next ring finds it started and not running.
    await ring(s.conversationId);
    const after = await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "Sorry, it was interrupted.",
      "the follow-up telling the search was interrupted",
    );
    await ring(s.conversationId);
    expect(notes(after).map((m) => m.content)).toEqual([
      "'parcel-search', which shipping asked in the background (call bg1), was interrupted before it finished: what it did is unknown. Tell the user, and ask it again if it is still needed.",
    ]);
    expect((await s.sent()).requests).toHaveLength(5);
    expect((await storedRun(s.conversationId, 1)).runs).toMatchObject([{ status: "interrupted" }]);
  });

  it("is delivered once even when its follow-up turn is cut off: the note is stored once, and a retry runs the turn again with it", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      lookup,
      { text: "Found it." },
      { text: "The follow-up, cut off.", holdAfter: 1 },
      { text: "Found it, I can tell you now." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    await providerSaw(s, (sent) => sent.requests.length === 6, "the follow-up turn's model call");
    await restart(s.conversationId);
    await s.release();
    // The follow-up turn had stored its note: it ended there (failed, as any turn a restart cuts off), and is not run again.
    await ring(s.conversationId);
    await ring(s.conversationId);
    const cut = await view(s.conversationId);
    expect(cut).toMatchObject({ turn: 2, status: "failed" });
    expect(notes(cut)).toHaveLength(1);
    expect((await s.sent()).requests).toHaveLength(6);
    expect(await scheduled(s.conversationId)).toEqual([]);
    const retried = await call(`/v1/conversations/${s.conversationId}/retry`, { method: "POST" });
    expect(retried.status).toBe(200);
    await retried.text();
    const after = await view(s.conversationId);
    expect(after.messages.at(-1)).toMatchObject({ role: "assistant", agent: "shipping", content: "Found it, I can tell you now." });
    expect(notes(after)).toHaveLength(1);
  });

  it("asks the user and waits beside the conversation: its question is decided by the same route, and it carries on from the alarm", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "I have started a search." },
      lookup,
      redeliver,
      { text: "You are welcome." },
      { text: "It is at the Arlington depot; it comes again on 2026-12-10, at the parcel locker." },
      { text: "Good news: it comes again on 2026-12-10." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost, please redeliver it"));
    const socket = await openSocket(s.conversationId, `?after=${(await view(s.conversationId)).lastEventId}`);
    await ring(s.conversationId);
    const waiting = await until(
      () => view(s.conversationId),
      (v) => (v.background as Array<{ status: string }>)[0]?.status === "awaiting_input",
      "the search waiting for the customer's answer",
    );
    // Its question is listed with the conversation's requests, under the call that asked the search; the turn is not waiting.
    expect(waiting.pendingRequests).toMatchObject([
      {
        kind: "question",
        toolCallId: "rd1",
        name: "arrange_redelivery",
        agent: "parcel-search",
        delegated: { path: ["bg1"], toolCallId: "rd1" },
      },
    ]);
    expect(waiting.status).toBe("completed");
    // Its deadline (this Worker's APPROVAL_EXPIRES_IN, 2 s) is timed as a turn's is: a request-expiry entry naming the run.
    const entries = await scheduled(s.conversationId);
    const search = entries.find((e) => e.kind === "delegation");
    expect(entries).toMatchObject([
      { kind: "request-expiry", run: search?.id },
      { kind: "delegation", toolCallId: "bg1" },
    ]);
    // An open socket saw the question as the search asked it, nested under the call.
    await socket.until(
      (f) => f.type === "delegated" && (f.data as { event: { type: string } }).event.type === "input-required",
      "the search's question on the socket",
    );

    // The conversation goes on meanwhile.
    const meanwhile = await chat(s.conversationId, s.tag("thanks"));
    expect(meanwhile.at(-1)).toMatchObject({ type: "done", status: "completed", text: "You are welcome." });
    expect((await view(s.conversationId)).pendingRequests).toHaveLength(1);

    // An answer that does not fit its schema is refused, and the question still waits.
    const decide = (answer: unknown) => answerRedelivery(s.conversationId, answer);
    const refused = await decide({ day: "soon", where: "roof" });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: "invalid_answer" } });
    // A socket's decision frame is checked the same way.
    socket.send({ type: "decision", decisions: [{ toolCallId: "rd1", answer: { day: "2026-12-10", where: "roof" } }] });
    await socket.until((f) => f.type === "error" && f.data.code === "invalid_answer", "the socket's answer refused");
    expect((await view(s.conversationId)).pendingRequests).toHaveLength(1);
    // Taken: 202, nothing to stream (no turn resumes); the search carries on from the alarm.
    const taken = await decide({ day: "2026-12-10", where: "parcel locker" });
    expect(taken.status).toBe(202);
    expect(await taken.json()).toEqual({ status: "background", background: expect.any(String), pending: [] });
    expect((await view(s.conversationId)).pendingRequests).toEqual([]);

    // The alarm carries the search on from its wait: the tool runs with the answer, and the result comes once.
    const after = await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "Good news: it comes again on 2026-12-10.",
      "the follow-up with the search's result",
    );
    await ring(s.conversationId);
    const sent = (await s.sent()).requests;
    expect(sent).toHaveLength(8);
    expect(sent[6]!.messages.filter((m) => m.role === "tool").at(-1)).toMatchObject({
      content: JSON.stringify({ orderId: "A1002", redeliveryDay: "2026-12-10", leaveAt: "parcel locker" }),
    });
    expect(notes(after)).toHaveLength(1);
    expect(after.background).toMatchObject([{ toolCallId: "bg1", status: "completed" }]);
    expect(after.activity).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "answered", toolCallId: "rd1" })]));
    const run = await storedRun(s.conversationId, 1);
    expect(run.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    expect(run.runs).toEqual([{ status: "completed", model_calls: 3 }]);
    socket.ws.close();
  });

  it("waiting for the user, ends when its entry is cancelled: its question goes, and nothing comes back", async () => {
    const s = await scenario((tag) => [transfer, startSearch(tag), { text: "Started." }, redeliver]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    const [entry] = await scheduled(s.conversationId);
    await ring(s.conversationId);
    await until(
      () => view(s.conversationId),
      (v) => (v.pendingRequests as unknown[]).length === 1,
      "the search waiting for the customer's answer",
    );
    // Rings while it waits leave it waiting, a restart too.
    await ring(s.conversationId);
    await restart(s.conversationId);
    await ring(s.conversationId);
    expect((await view(s.conversationId)).pendingRequests).toHaveLength(1);
    expect((await view(s.conversationId)).background).toMatchObject([{ toolCallId: "bg1", status: "awaiting_input" }]);
    // A fork copies the run as it stood, over: the wait is this conversation's, not the fork's.
    const fork = await call(`/v1/conversations/${s.conversationId}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ afterTurn: 1 }),
    });
    const forked = await view(((await fork.json()) as { id: string }).id);
    expect(forked.background).toMatchObject([{ toolCallId: "bg1", status: "interrupted" }]);
    expect(forked.pendingRequests).toEqual([]);
    expect((await call(`/v1/conversations/${s.conversationId}/schedule/${entry!.id}`, { method: "DELETE" })).status).toBe(200);
    const after = await view(s.conversationId);
    expect(after.pendingRequests).toEqual([]);
    expect(after.background).toMatchObject([{ toolCallId: "bg1", status: "interrupted" }]);
    const late = await answerRedelivery(s.conversationId, { day: "2026-12-10", where: "front door" });
    expect(late.status).toBe(409);
    await ring(s.conversationId);
    expect((await view(s.conversationId)).turn).toBe(1);
    expect((await s.sent()).requests).toHaveLength(4);
  });

  it("waiting beside a turn that waits for a call of the same id (ids are unique within a run, not across runs): the turn's is decided first", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      redeliver,
      redeliver,
      { text: "Booked for the 10th." },
      { text: "Found; it comes again on the 11th." },
      { text: "Good news: the 11th." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    await until(
      () => view(s.conversationId),
      (v) => (v.pendingRequests as unknown[]).length === 1,
      "the search's question",
    );
    // Shipping asks the same in the conversation, with the same call id: the turn waits too.
    const asked = await chat(s.conversationId, s.tag("please redeliver it"));
    expect(asked.at(-1)).toMatchObject({ type: "done", status: "awaiting_input" });
    expect((await view(s.conversationId)).pendingRequests).toMatchObject([
      { toolCallId: "rd1" },
      { toolCallId: "rd1", delegated: { path: ["bg1"] } },
    ]);
    const decide = (day: string) => answerRedelivery(s.conversationId, { day, where: "front door" });
    const turn = await decide("2026-12-10");
    expect(turn.status).toBe(200);
    expect(await turn.text()).toContain("Booked for the 10th.");
    expect((await view(s.conversationId)).pendingRequests).toMatchObject([{ toolCallId: "rd1", delegated: { path: ["bg1"] } }]);
    const search = await decide("2026-12-11");
    expect(search.status).toBe(202);
    await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "Good news: the 11th.",
      "the search's follow-up",
    );
    const sent = (await s.sent()).requests;
    expect(sent[6]!.messages.filter((m) => m.role === "tool").at(-1)?.content).toContain("2026-12-11");
  });

  it("takes one batch that decides the turn's request and the search's: each goes to the run that waits for its call", async () => {
    const redeliverHere = { toolCalls: [{ id: "rd2", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1002" }) }] };
    // The turn and the search each carry on once decided, in whichever order they reach the provider: they say the same.
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      redeliver,
      redeliverHere,
      ...Array(2).fill({ text: "Noted." }),
      { text: "Good news." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    await until(
      () => view(s.conversationId),
      (v) => (v.pendingRequests as unknown[]).length === 1,
      "the search's question",
    );
    const asked = await chat(s.conversationId, s.tag("please redeliver it"));
    expect(asked.at(-1)).toMatchObject({ type: "done", status: "awaiting_input" });
    const both = await call(`/v1/conversations/${s.conversationId}/decisions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        decisions: [
          { toolCallId: "rd1", answer: { day: "2026-12-11", where: "front door" } },
          { toolCallId: "rd2", answer: { day: "2026-12-10", where: "neighbour" } },
        ],
      }),
    });
    // The turn's share resumes the turn (its stream); the search's is recorded in the same write, and the alarm carries it on.
    expect(both.status).toBe(200);
    expect(await both.text()).toContain('"status":"completed"');
    expect((await view(s.conversationId)).pendingRequests).toEqual([]);
    await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "Good news.",
      "the search's follow-up",
    );
    const answers = (await s.sent()).requests.flatMap((r) => r.messages.filter((m) => m.role === "tool").map((m) => String(m.content)));
    expect(answers).toContain(JSON.stringify({ orderId: "A1002", redeliveryDay: "2026-12-10", leaveAt: "neighbour" }));
    expect(answers).toContain(JSON.stringify({ orderId: "A1002", redeliveryDay: "2026-12-11", leaveAt: "front door" }));
    const activity = (await view(s.conversationId)).activity as Array<{ kind: string; toolCallId: string }>;
    expect(
      activity
        .filter((a) => a.kind === "answered")
        .map((a) => a.toolCallId)
        .sort(),
    ).toEqual(["rd1", "rd2"]);
  });

  it("waiting for the user past a request's deadline, declines it as expired and carries on", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      redeliver,
      { text: "Found it; no redelivery was booked." },
      { text: "The search found it, but no redelivery was booked." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    await until(
      () => view(s.conversationId),
      (v) => (v.pendingRequests as unknown[]).length === 1,
      "the search waiting for the customer's answer",
    );
    // Its question's deadline passes (the demo's asks set none: the stored one is moved into the past).
    await runInDurableObject(stub(s.conversationId), (_object, state) => {
      // The run's requests are its stored wait's (the ledger keeps them once).
      state.storage.sql.exec(
        `UPDATE runs SET state = json_set(state, '$.suspension.pending[0].expiresAt', '2026-01-01T00:00:00.000Z') WHERE mode = 'background'`,
      );
    });
    await ring(s.conversationId);
    const after = await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.content === "The search found it, but no redelivery was booked.",
      "the follow-up after the expired question",
    );
    expect(after.pendingRequests).toEqual([]);
    expect(after.activity).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "expired", toolCallId: "rd1" })]));
    const sent = (await s.sent()).requests;
    expect(sent[4]!.messages.at(-1)).toMatchObject({
      role: "tool",
      content: "The user did not answer before the deadline: the request expired.",
    });
    expect(notes(after)).toHaveLength(1);
  });

  it("waiting past its request's deadline, with nothing else due: the deadline's own entry declines that request then", async () => {
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      redeliver,
      { text: "Found it; no redelivery was booked." },
      { text: "The search found it, but no redelivery was booked." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    const waiting = await until(
      () => view(s.conversationId),
      (v) => (v.pendingRequests as unknown[]).length === 1,
      "the search waiting for the customer's answer",
    );
    const { expiresAt } = (waiting.pendingRequests as Array<{ expiresAt: string }>)[0]!;
    // Only the deadline's entry is due soon (APPROVAL_EXPIRES_IN, 2 s); the run's own entry looks again a day on.
    const entries = await scheduled(s.conversationId);
    const search = entries.find((e) => e.kind === "delegation")!;
    expect(entries).toMatchObject([
      { kind: "request-expiry", run: search.id, dueAt: expiresAt },
      { kind: "delegation", toolCallId: "bg1" },
    ]);
    expect(Date.parse(String(search.dueAt)) - Date.parse(expiresAt)).toBeGreaterThan(23 * 3600_000);
    // No entry is made due by hand: the alarm the deadline set rings by itself.
    const after = await until(
      () => view(s.conversationId),
      (v) => v.messages.at(-1)?.role === "assistant" && v.turn === 2,
      "the follow-up after the question expired",
    );
    const expired = (after.activity as Array<{ kind: string; toolCallId?: string; at: string }>).filter((a) => a.kind === "expired");
    expect(expired).toMatchObject([{ toolCallId: "rd1" }]);
    expect(Date.parse(expired[0]!.at)).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    const sent = (await s.sent()).requests;
    expect(sent[4]!.messages.at(-1)).toMatchObject({
      role: "tool",
      content: "The user did not answer before the deadline: the request expired.",
    });
    expect(after.background).toMatchObject([{ toolCallId: "bg1", status: "completed" }]);
  });

  it("started by a turn that is retried: the run stays in the view, and what it spent still counts toward usage and the budget", async () => {
    // The search's first step reports tokens that bring the conversation near its budget (this project's 1,000,000 input
    // tokens): the retried turn may make one call before the budget stops it, only if the search's spending still counts.
    const s = await scenario((tag) => [
      transfer,
      startSearch(tag),
      { text: "Started." },
      { ...lookup, usage: { promptTokens: 999_800, completionTokens: 7 } },
      redeliver,
      transfer,
      { text: "Let me look again." },
    ]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    const waiting = await until(
      () => view(s.conversationId),
      (v) => (v.background as Array<{ status: string }>)[0]?.status === "awaiting_input",
      "the search waiting for the customer's answer",
    );
    // Turn 1's 3 calls (42 input tokens each) and the search's 2.
    expect(waiting.usage).toMatchObject({ modelCalls: 5, inputTokens: 3 * 42 + 999_800 + 42 });
    const retried = await call(`/v1/conversations/${s.conversationId}/retry`, { method: "POST" });
    expect(retried.status).toBe(200);
    expect(parseSse(await retried.text()).at(-1)).toMatchObject({
      type: "error",
      code: "budget_exceeded",
      message: expect.stringMatching(/perConversation\.inputTokens/),
    });
    const check = async () => {
      const after = await view(s.conversationId);
      // The run went with the turn's entry (interrupted), but it ran: it is listed, and its calls count beside both legs'.
      expect(after.background).toMatchObject([{ toolCallId: "bg1", turn: 1, agent: "parcel-search", status: "interrupted" }]);
      expect(after.usage).toMatchObject({ modelCalls: 6, inputTokens: 4 * 42 + 999_800 + 42 });
      expect(after.pendingRequests).toEqual([]);
    };
    await check();
    await restart(s.conversationId);
    await check();
    expect((await s.sent()).remaining).toBe(1);
  });

  it("stops when the conversation is deleted, or its entry cancelled: nothing comes back", async () => {
    const s = await scenario((tag) => [transfer, startSearch(tag), { text: "Started." }, { ...lookup, holdAfter: 0 }, { text: "never" }]);
    await chat(s.conversationId, s.tag("my parcel for order A1002 is lost"));
    await ring(s.conversationId);
    await providerSaw(s, (sent) => sent.requests.length === 4, "the search's first model call");
    const deleted = await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    await providerSaw(s, (sent) => sent.aborted === 1, "the search's model call aborted");
    await s.release();
    expect((await call(`/v1/conversations/${s.conversationId}`)).status).toBe(404);
    expect(await runInDurableObject(stub(s.conversationId), (_o, state) => state.storage.getAlarm())).toBeNull();

    const c = await scenario((tag) => [transfer, startSearch(tag), { text: "Started." }, { ...lookup, holdAfter: 0 }, { text: "never" }]);
    await chat(c.conversationId, c.tag("my parcel for order A1002 is lost"));
    const [entry] = await scheduled(c.conversationId);
    await ring(c.conversationId);
    await providerSaw(c, (sent) => sent.requests.length === 4, "the search's first model call");
    expect((await call(`/v1/conversations/${c.conversationId}/schedule/${entry!.id}`, { method: "DELETE" })).status).toBe(200);
    await providerSaw(c, (sent) => sent.aborted === 1, "the search's model call aborted");
    await c.release();
    await ring(c.conversationId);
    expect(await scheduled(c.conversationId)).toEqual([]);
    expect((await view(c.conversationId)).turn).toBe(1);
    expect((await storedRun(c.conversationId, 1)).runs).toMatchObject([{ status: "interrupted" }]);
  });
});
