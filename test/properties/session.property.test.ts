/**
 * Invariants of the whole service under random request sequences: messages answered by a fake
 * provider scripted at random (text, valid and broken tool calls, approval-gated refunds,
 * transfers to real and invented agents, provider errors, cut and dropped streams, slow streams),
 * approvals with mixed decisions, unknown approvals, reconnects (after a turn and during one),
 * retries and edits of the last turn, cancels (during a turn and with none running), forks,
 * deletes and evictions, handoffs that return (to the calculator, which gives the conversation
 * back once it has answered) and to a person (who answers and hands back through the operator
 * API), and a crash between a step's calls being recorded and its results committed, follow-ups the
 * alarm runs, and (in the session-deadlines project) approvals that expire and a person who does not
 * answer in time, all through the Worker's fetch handler. Every request's status is
 * predicted from what the test knows of the conversation, so no assertion is conditional.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import type { ScriptedAnswer } from "../node/fake-openai-server.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { parseSse, type ReceivedEvent, readSse } from "../support/sse.ts";
import { call, type ConversationJson, postMessage, scenario, stored } from "../support/worker.ts";

const args = (value: unknown) => JSON.stringify(value);
const json = { "content-type": "application/json" };

const toolCall = fc.constantFrom(
  { name: "lookup_order", arguments: args({ orderId: "A1001" }) },
  { name: "lookup_order", arguments: "{broken" },
  { name: "refund", arguments: args({ orderId: "A1002", amountUsd: 10 }) },
  { name: "refund", arguments: args({ orderId: "A1001", amountUsd: 20 }) },
  { name: "sum_numbers", arguments: args({ a: "one", b: 2 }) },
  { name: "transfer_to_billing", arguments: args({ reason: "money" }) },
  { name: "transfer_to_shipping", arguments: "{}" },
  { name: "transfer_to_calculator", arguments: "{}" },
  { name: "transfer_to_support_desk", arguments: args({ reason: "wants a person" }) },
  { name: "transfer_to_triage", arguments: "{}" },
  { name: "transfer_to_nobody", arguments: "{}" },
  // A follow-up (shipping has the tool; anyone else's call is an unknown tool).
  { name: "schedule_followup", arguments: args({ inMinutes: 30, note: "check the parcel again" }) },
);

const answer: fc.Arbitrary<ScriptedAnswer> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom<ScriptedAnswer>(
      { text: "All sorted." },
      { text: "" },
      { text: "A slower answer, streamed over a while.", delayMs: 15 },
    ),
  },
  { weight: 6, arbitrary: fc.array(toolCall, { minLength: 1, maxLength: 3 }).map((toolCalls) => ({ text: "Working on it.", toolCalls })) },
  // A returning handoff to the calculator (it gives the conversation back once it answers), and a handoff to a person.
  {
    weight: 5,
    arbitrary: fc.constantFrom<ScriptedAnswer>(
      { toolCalls: [{ name: "transfer_to_calculator", arguments: "{}" }] },
      { toolCalls: [{ name: "transfer_to_support_desk", arguments: args({ reason: "wants a person" }) }] },
    ),
  },
  // Shipping schedules a follow-up (a turn of its own when the alarm runs it); with another holder it is an unknown tool.
  {
    weight: 3,
    arbitrary: fc.constant<ScriptedAnswer>({ toolCalls: [{ name: "transfer_to_shipping", arguments: args({ reason: "a parcel" }) }] }),
  },
  {
    weight: 5,
    arbitrary: fc.constant<ScriptedAnswer>({
      text: "I will check again later.",
      toolCalls: [{ name: "schedule_followup", arguments: args({ inMinutes: 45, note: "check the parcel again" }) }],
    }),
  },
  // Two refunds at once, so decisions can differ between them.
  {
    weight: 4,
    arbitrary: fc.constant<ScriptedAnswer>({
      toolCalls: [
        { name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) },
        { name: "refund", arguments: args({ orderId: "A1002", amountUsd: 5 }) },
      ],
    }),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<ScriptedAnswer>(
      { status: 500, error: { message: "down" } },
      { status: 429, error: { message: "slow" } },
      { text: "cut short here", endAfter: 2 },
      { text: "dropped here", dropAfter: 2 },
    ),
  },
);

type Op =
  | { kind: "message"; reconnectDuring: boolean; cancelDuring: boolean }
  | { kind: "retry"; edit: boolean }
  | { kind: "cancel" }
  | { kind: "fork"; back: number }
  | { kind: "approve"; approved: boolean[] }
  | { kind: "unknown-approval" }
  | { kind: "reconnect"; back: number }
  | { kind: "delete" }
  | { kind: "evict" }
  | { kind: "operator-message" }
  | { kind: "hand-back" }
  | { kind: "crash-mid-tool" }
  /** Makes one scheduled entry due (`pick` of them) and runs the alarm twice. */
  | { kind: "alarm"; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("message" as const),
      reconnectDuring: fc.boolean(),
      // One message in five is cancelled while it runs.
      cancelDuring: fc.nat({ max: 4 }).map((n) => n === 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("retry" as const), edit: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "cancel" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("fork" as const), back: fc.nat({ max: 3 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("approve" as const), approved: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "unknown-approval" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("reconnect" as const), back: fc.nat({ max: 12 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "evict" as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: "operator-message" as const }) },
  { weight: 3, arbitrary: fc.constant({ kind: "hand-back" as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: "crash-mid-tool" as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("alarm" as const), pick: fc.nat({ max: 5 }) }) },
);

/** The example network's returning handoffs: to the calculator, from the agents that hand it sums. */
const returns = (from: string, to: string) => to === "calculator" && ["triage", "billing", "shipping"].includes(from);
const PERSON = "support-desk";

/** Checks one stream's framing: one terminal event, last; ids consecutive. */
function checkStream(events: ReceivedEvent[]): void {
  expect(events.filter((e) => e.type === "done" || e.type === "error")).toHaveLength(1);
  expect(["done", "error"]).toContain(events.at(-1)!.type);
  for (let i = 1; i < events.length; i++) expect(events[i]!.id).toBe(events[i - 1]!.id + 1);
}

/** What the test knows of the conversation between operations: enough to predict every status. */
interface Known {
  view: ConversationJson | null;
}

async function look(id: string): Promise<Known> {
  const res = await call(`/v1/conversations/${id}`);
  expect([200, 404]).toContain(res.status);
  if (res.status === 404) {
    await res.body?.cancel();
    return { view: null };
  }
  await res.body?.cancel();
  return { view: await stored(id) };
}

const runs = Math.max(4, Math.round(inject("propertyRuns") / 10));
/** Counted over the whole property, so a run of it shows its operations really happen. */
const tally = {
  approvalsDecided: 0,
  mixedDecisions: 0,
  reconnectsDuringRun: 0,
  retries: 0,
  cancelsDuringRun: 0,
  forks: 0,
  returns: 0,
  personHeldMessages: 0,
  operatorMessages: 0,
  handBacks: 0,
  crashesMidTool: 0,
  followUpsRun: 0,
  approvalsExpired: 0,
  personTimeouts: 0,
};

/**
 * In the session-deadlines project every approval and the person have a deadline (an hour: none
 * passes by itself); the alarm operation makes one pass, as time would.
 */
const deadlines = (env as unknown as { APPROVAL_EXPIRES_IN?: string }).APPROVAL_EXPIRES_IN !== undefined;

interface Entry {
  id: string;
  kind: string;
  turn: number;
}

async function scheduleOf(id: string): Promise<Entry[]> {
  const res = await call(`/v1/conversations/${id}/schedule`);
  if (res.status === 404) {
    await res.body?.cancel();
    return [];
  }
  return ((await res.json()) as { entries: Entry[] }).entries;
}

/**
 * Makes one entry due now, as time passing would, and runs the alarm twice (it must act once). An
 * approval's deadline is also in the suspension's calls (`expiresAt`), so time passes for them too,
 * and the object restarts to read them.
 */
async function fireAlarm(id: string, entry: Entry): Promise<void> {
  const stub = env.CONVERSATIONS.getByName(id);
  const past = Date.now() - 1;
  // The alarm stays set for the entry's old time (no alarm fires by itself meanwhile); runDurableObjectAlarm runs it now.
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec(`UPDATE schedule SET due_at = ? WHERE id = ?`, past, entry.id);
    if (entry.kind !== "request-expiry") return;
    // The turn's wait is its own run's (the ledger's root, path ''), while it waits.
    const waiting = `path = '' AND decisions IS NOT NULL`;
    const row = state.storage.sql.exec<{ state: string }>(`SELECT state FROM runs WHERE ${waiting}`).one();
    const data = JSON.parse(row.state) as { suspension: { pending: Array<{ expiresAt?: string }> } };
    for (const call of data.suspension.pending) call.expiresAt = new Date(past).toISOString();
    state.storage.sql.exec(`UPDATE runs SET state = ? WHERE ${waiting}`, JSON.stringify(data));
  });
  if (entry.kind === "request-expiry") await evictDurableObject(stub).catch(() => {});
  await runDurableObjectAlarm(stub);
  await runDurableObjectAlarm(stub);
}

/** What the schedule holds agrees with the conversation: deadlines only while someone is waited for. */
function checkSchedule(entries: Entry[], view: ConversationJson | null, personAnswered: boolean): void {
  // The schedule holds only entries of turns that exist: a rewind or a delete takes theirs away.
  for (const entry of entries) expect(entry.turn).toBeLessThanOrEqual(view?.turn ?? 0);
  const kinds = entries.map((e) => e.kind);
  if (!deadlines) {
    expect(kinds.filter((k) => k !== "follow-up")).toEqual([]);
    return;
  }
  const pending = view?.pendingApprovals ?? [];
  // Every call waiting for a person has its deadline, and one entry stands for the earliest.
  for (const call of pending) expect(call.expiresAt).toEqual(expect.any(String));
  expect(kinds.filter((k) => k === "request-expiry")).toHaveLength(pending.length > 0 ? 1 : 0);
  // A person's deadline stands only while the person holds the conversation and has not answered.
  if (kinds.includes("person-timeout")) expect([view?.activeAgent, personAnswered]).toEqual([PERSON, false]);
}

describe("service invariants (fast-check, through the Worker)", () => {
  it(
    `hold under random request sequences (${runs} runs, seed ${inject("propertySeed")})`,
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(answer, { minLength: 20, maxLength: 20 }),
          // Every sequence opens with a message, so the operations after it have a conversation to act on.
          fc
            .array(op, { minLength: 2, maxLength: 11 })
            .map((rest): Op[] => [{ kind: "message", reconnectDuring: false, cancelDuring: false }, ...rest]),
          async (answers, ops) => {
            // The first answer hands the conversation to billing, whose refunds wait for approval.
            const s = await scenario([{ toolCalls: [{ name: "transfer_to_billing", arguments: args({ reason: "money" }) }] }, ...answers]);
            const id = s.conversationId;
            const seen = new Map<number, ReceivedEvent>();
            let handoffs = 0;
            /** Handoff events of the latest turn: a retry takes them back. */
            let turnHandoffs = 0;
            /** The caller stack as the handoff events built it ("caller→callee"), and as it stood when the latest turn began. */
            let stack: string[] = [];
            let turnStartStack: string[] = [];
            let first = true;
            /** Whether the person answered since the conversation was last handed to them. */
            let personAnswered = false;
            for (const operation of ops) {
              const known = await look(id);
              const entries = await scheduleOf(id);
              checkSchedule(entries, known.view, personAnswered);
              const pending = known.view?.pendingApprovals.map((p) => p.toolCallId) ?? [];
              let events: ReceivedEvent[] | undefined;
              if (operation.kind === "message") {
                const res = await postMessage(id, first ? s.tag("help me") : "more");
                if (pending.length > 0) {
                  expect((await res.json()) as unknown).toMatchObject({ error: { code: "request_pending" } });
                  expect(res.status).toBe(409);
                  continue;
                }
                expect(res.status).toBe(200);
                first = false;
                turnHandoffs = 0;
                turnStartStack = [...stack];
                if (known.view?.activeAgent === PERSON) tally.personHeldMessages++;
                events = operation.cancelDuring
                  ? await readWithCancel(id, res)
                  : operation.reconnectDuring
                    ? await readWithReconnect(id, res)
                    : parseSse(await res.text());
              } else if (operation.kind === "approve") {
                if (pending.length === 0) continue;
                const decisions = pending.map((toolCallId, i) => ({ toolCallId, approved: operation.approved[i % 3]! }));
                tally.approvalsDecided++;
                if (new Set(decisions.map((d) => d.approved)).size > 1) tally.mixedDecisions++;
                const res = await call(`/v1/conversations/${id}/approvals`, {
                  method: "POST",
                  headers: json,
                  body: JSON.stringify({ decisions }),
                });
                expect(res.status).toBe(200);
                events = parseSse(await res.text());
              } else if (operation.kind === "retry") {
                const res = await call(`/v1/conversations/${id}/retry`, {
                  method: "POST",
                  // An edit keeps the scenario's tag: the rewound turn may be the one that carried it.
                  ...(operation.edit ? { headers: json, body: JSON.stringify({ message: s.tag("edited") }) } : {}),
                });
                const expected = known.view === null ? 404 : known.view.turn === 0 ? 409 : 200;
                expect(res.status).toBe(expected);
                if (expected !== 200) {
                  await res.body?.cancel();
                  continue;
                }
                tally.retries++;
                // The rewound turn's handoffs are gone from the counters with it, and the caller stack is as it began.
                handoffs -= turnHandoffs;
                turnHandoffs = 0;
                stack = [...turnStartStack];
                events = parseSse(await res.text());
              } else if (operation.kind === "cancel") {
                const res = await call(`/v1/conversations/${id}/cancel`, { method: "POST" });
                expect(res.status).toBe(known.view === null ? 404 : 200);
                if (known.view) expect(await res.json()).toEqual({ cancelled: false });
                else await res.body?.cancel();
                continue;
              } else if (operation.kind === "fork") {
                const afterTurn = Math.max(1, (known.view?.turn ?? 0) - operation.back);
                const res = await call(`/v1/conversations/${id}/fork`, {
                  method: "POST",
                  headers: json,
                  body: JSON.stringify({ afterTurn }),
                });
                const expected = known.view === null ? 404 : known.view.turn === 0 ? 404 : 201;
                expect(res.status).toBe(expected);
                if (expected !== 201) {
                  await res.body?.cancel();
                  continue;
                }
                tally.forks++;
                const forked = await stored(((await res.json()) as { id: string }).id);
                // The fork holds a prefix of the original's history, valid on its own; the original is untouched.
                expect(known.view!.messages.slice(0, forked.messages.length)).toEqual(forked.messages);
                expect(findHistoryProblem(forked.messages)).toBeNull();
                expect(forked.handoffCount).toBeLessThanOrEqual(known.view!.handoffCount);
                expect(await stored(id)).toEqual(known.view);
                continue;
              } else if (operation.kind === "unknown-approval") {
                const res = await call(`/v1/conversations/${id}/approvals`, {
                  method: "POST",
                  headers: json,
                  body: JSON.stringify({ decisions: [{ toolCallId: "no-such-call", approved: true }] }),
                });
                const expected =
                  known.view === null
                    ? [404, "conversation_not_found"]
                    : pending.length > 0
                      ? [404, "request_not_found"]
                      : [409, "no_pending_request"];
                expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual(expected);
                continue;
              } else if (operation.kind === "reconnect") {
                const last = Math.max(0, ...seen.keys());
                const after = Math.max(0, last - operation.back);
                const replay = await call(`/v1/conversations/${id}/events`, { headers: { "last-event-id": String(after) } });
                const lastEventId = known.view?.lastEventId ?? 0;
                const expected = known.view === null ? 404 : after === lastEventId ? 204 : after > lastEventId ? 409 : 200;
                expect(replay.status).toBe(expected);
                const text = await replay.text();
                const replayedEvents = expected === 200 ? parseSse(text) : [];
                // A reconnect picks up after the id given, in order, agreeing with what was streamed.
                for (const [i, event] of replayedEvents.entries()) {
                  expect(event.id).toBeGreaterThan(i > 0 ? replayedEvents[i - 1]!.id : after);
                  if (seen.has(event.id)) expect(event).toEqual(seen.get(event.id));
                }
                continue;
              } else if (operation.kind === "delete") {
                const deleted = await call(`/v1/conversations/${id}`, { method: "DELETE" });
                expect(deleted.status).toBe(known.view === null ? 404 : 204);
                seen.clear();
                handoffs = 0;
                turnHandoffs = 0;
                stack = [];
                turnStartStack = [];
                first = true;
                personAnswered = false;
                continue;
              } else if (operation.kind === "crash-mid-tool") {
                // A turn whose step's calls were recorded, then the process died before their results were committed.
                if (!known.view || pending.length > 0 || known.view.activeAgent === PERSON) continue;
                tally.crashesMidTool++;
                const callId = `crash-${tally.crashesMidTool}`;
                await crashMidTool(id, known.view.activeAgent, callId);
                first = false;
                turnHandoffs = 0;
                turnStartStack = [...stack];
                const res = await call(`/v1/conversations/${id}/events`, {
                  headers: { "last-event-id": String(known.view.lastEventId) },
                });
                expect(res.status).toBe(200);
                events = parseSse(await res.text());
                // The restart answered the call that may have run, once, and ended the turn with an error.
                expect(events.filter((e) => e.type === "tool-result").map((e) => e.toolCallId)).toEqual([callId]);
                expect(events.at(-1)).toMatchObject({ type: "error", code: "interrupted" });
                for (const event of events) seen.set(event.id, event);
                const after = await stored(id);
                expect(after.messages.filter((m) => m.role === "tool" && m.toolCallId === callId)).toMatchObject([
                  { isError: true, content: expect.stringContaining("may or may not have taken effect") },
                ]);
                continue;
              } else if (operation.kind === "alarm") {
                const entry = entries[operation.pick % Math.max(1, entries.length)];
                if (!known.view || !entry) continue;
                await fireAlarm(id, entry);
                const after = await stored(id);
                if (entry.kind === "follow-up" && after.lastEventId === known.view.lastEventId) {
                  // A follow-up due while calls wait for a person is put off.
                  expect(known.view.pendingApprovals.length).toBeGreaterThan(0);
                  continue;
                }
                const res = await call(`/v1/conversations/${id}/events`, { headers: { "last-event-id": String(known.view.lastEventId) } });
                const replayed = await res.text();
                expect(res.status, `${replayed} (before ${known.view.lastEventId}, after ${after.lastEventId})`).toBe(200);
                events = parseSse(replayed);
                if (entry.kind === "request-expiry") {
                  // Every undecided call is declined as expired, and the suspended turn goes on as its agent.
                  tally.approvalsExpired++;
                  expect(events[0]).toMatchObject({ type: "run-start", resumed: true });
                  const declined = events.flatMap((e) => (e.type === "tool-result" && e.denied ? [e.toolCallId] : []));
                  expect(declined).toEqual(known.view.pendingApprovals.map((p) => p.toolCallId));
                  expect(after.turn).toBe(known.view.turn);
                } else {
                  // A follow-up, or the person's deadline passing, runs a turn of its own, once for the two alarms.
                  if (entry.kind === "person-timeout") {
                    // The person's hands give the conversation back first (a change of hands of the turn before).
                    tally.personTimeouts++;
                    events = events.filter((e) => !(e.type === "handoff" && e.kind === "hand-back"));
                    const later = events.filter((e) => e.type === "handoff").length;
                    expect(after.handoffs.at(-1 - later)).toMatchObject({
                      kind: "hand-back",
                      from: PERSON,
                      note: "No one answered in time.",
                    });
                  } else tally.followUpsRun++;
                  first = false;
                  turnHandoffs = 0;
                  turnStartStack = [...stack];
                  expect(events[0]).toMatchObject({ type: "run-start", scheduled: true });
                  expect(after.turn).toBe(known.view.turn + 1);
                }
              } else if (operation.kind === "operator-message" || operation.kind === "hand-back") {
                const handBack = operation.kind === "hand-back";
                const res = await call(`/v1/conversations/${id}/operator/${handBack ? "handoff" : "messages"}`, {
                  method: "POST",
                  headers: json,
                  body: JSON.stringify(handBack ? { to: "triage", note: "sorted by a person" } : { message: "A person here." }),
                });
                const held = known.view?.activeAgent === PERSON;
                const expected = known.view === null ? [404, "conversation_not_found"] : held ? [200] : [409, "not_held_by_person"];
                const body = (await res.json()) as { error?: { code: string } };
                expect([res.status, ...(body.error ? [body.error.code] : [])]).toEqual(expected);
                if (res.status !== 200) continue;
                const after = await stored(id);
                if (handBack) {
                  tally.handBacks++;
                  // A hand back is a change of hands that spends no handoff budget (docs/handoffs.md): not counted.
                  expect(after.activeAgent).toBe("triage");
                  expect(after.handoffs.at(-1)).toMatchObject({
                    kind: "hand-back",
                    from: PERSON,
                    to: "triage",
                    note: "sorted by a person",
                  });
                } else {
                  tally.operatorMessages++;
                  personAnswered = true;
                  expect(after.messages.at(-1)).toMatchObject({ role: "assistant", agent: PERSON, content: "A person here." });
                }
                expect(after.handoffCount).toBe(handoffs);
                continue;
              } else {
                // Refused while the object still winds a turn down; the next operation finds it either way.
                await evictDurableObject(env.CONVERSATIONS.getByName(id)).catch(() => {});
                continue;
              }
              checkStream(events);
              for (const event of events) seen.set(event.id, event);
              const handedOff = events.filter((e) => e.type === "handoff");
              // Only transfers count (HANDOFF_RULES): returns and hand-backs are events, not budget.
              const transfers = handedOff.filter((e) => e.type === "handoff" && e.kind === "transfer").length;
              handoffs += transfers;
              turnHandoffs += transfers;
              // Returns close the frame on top, the one their transfer opened; returning transfers open one.
              for (const e of handedOff) {
                const { kind, from, to } = e as ReceivedEvent & { kind: string; from: string; to: string };
                if (to === PERSON) personAnswered = false;
                if (kind === "return") {
                  tally.returns++;
                  expect(stack.pop()).toBe(`${to}→${from}`);
                } else if (kind === "transfer" && returns(from, to)) stack.push(`${from}→${to}`);
                else expect(kind).toBe("transfer");
              }
              const state = await stored(id);
              expect(state.callers.map((f) => `${f.caller}→${f.callee}`)).toEqual(stack);
              // With a person holding the conversation and no call left to decide, the turn ends waiting for them.
              if (state.activeAgent === PERSON && state.pendingApprovals.length === 0)
                expect(events.at(-1)).toMatchObject({ type: "done", status: expect.stringMatching(/^(awaiting_human|cancelled)$/) });
              // The handoff count equals the transfer events ever sent; nothing is stored twice or unseen.
              expect(state.handoffCount).toBe(handoffs);
              const storedResults = state.messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
              expect(new Set(storedResults).size).toBe(storedResults.length);
              const streamedResults = new Set([...seen.values()].flatMap((e) => (e.type === "tool-result" ? [e.toolCallId] : [])));
              for (const toolCallId of storedResults) expect(streamedResults.has(toolCallId)).toBe(true);
              expect(["billing", "shipping", "calculator", "triage", PERSON]).toContain(state.activeAgent);
            }
          },
        ),
        { numRuns: runs, seed: inject("propertySeed") },
      );
      console.log(
        `session property over ${runs} runs: ${tally.approvalsDecided} approvals decided (${tally.mixedDecisions} mixed), ${tally.reconnectsDuringRun} reconnects during a run, ${tally.retries} retries, ${tally.cancelsDuringRun} cancels that stopped a run, ${tally.forks} forks, ${tally.returns} returns, ${tally.personHeldMessages} messages to a person, ${tally.operatorMessages} operator messages, ${tally.handBacks} hand backs, ${tally.crashesMidTool} crashes mid-tool, ${tally.followUpsRun} follow-ups run by the alarm, ${tally.approvalsExpired} approvals expired, ${tally.personTimeouts} people timed out`,
      );
      if (deadlines) expect(tally.approvalsExpired + tally.personTimeouts).toBeGreaterThan(0);
      expect(tally.approvalsDecided).toBeGreaterThan(0);
      expect(tally.reconnectsDuringRun).toBeGreaterThan(0);
      expect(tally.retries).toBeGreaterThan(0);
      expect(tally.forks).toBeGreaterThan(0);
      expect(tally.returns).toBeGreaterThan(0);
      expect(tally.operatorMessages + tally.handBacks).toBeGreaterThan(0);
      expect(tally.crashesMidTool).toBeGreaterThan(0);
    },
    // Each run is a few turns through the Worker: the bound grows with the number of runs.
    Math.max(20_000, runs * 2_000),
  );
});

/**
 * The store as a turn leaves it when its process dies while a tool runs: the user's message
 * committed, the step's calls recorded ahead of the tool, nothing after. Then the object is
 * evicted, and its next start recovers.
 */
async function crashMidTool(id: string, holder: string, callId: string): Promise<void> {
  const stub = env.CONVERSATIONS.getByName(id);
  await runInDurableObject(stub, (_instance, state) => {
    const store = new ConversationStore(state.storage);
    store.beginTurn("check my order");
    store.commitStep({ messages: [{ role: "user", content: "check my order" }] }, []);
    const assistant = {
      role: "assistant" as const,
      agent: holder,
      content: null,
      toolCalls: [{ id: callId, name: "lookup_order", arguments: '{"orderId":"A1001"}', plan: "tool" as const }],
    };
    store.recordCalls({ assistant, started: [callId] });
  });
  await evictDurableObject(stub).catch(() => {});
}

/**
 * Reads a turn's stream to its first event and cancels it: the stream ends with `done` cancelled,
 * or as it would have if the turn ended first; either way one terminal event, and the next request
 * is accepted.
 */
async function readWithCancel(id: string, res: Response): Promise<ReceivedEvent[]> {
  const stream = readSse(res.body!);
  const head = (await stream.next()).value as ReceivedEvent;
  const cancelled = await call(`/v1/conversations/${id}/cancel`, { method: "POST" });
  expect(cancelled.status).toBe(200);
  const { cancelled: stopped } = (await cancelled.json()) as { cancelled: boolean };
  const all = [head];
  for await (const event of stream) all.push(event);
  const terminal = all.at(-1)!;
  if (terminal.type === "done" && terminal.status === "cancelled") {
    expect(stopped).toBe(true);
    tally.cancelsDuringRun++;
  }
  return all;
}

/**
 * Reads a turn's stream to its first event, reconnects with that id while the turn may still be
 * running, and reads both to the end: the reconnect continues exactly where the first left off.
 */
async function readWithReconnect(id: string, res: Response): Promise<ReceivedEvent[]> {
  const original = readSse(res.body!);
  const head = (await original.next()).value as ReceivedEvent;
  const again = await call(`/v1/conversations/${id}/events`, { headers: { "last-event-id": String(head.id) } });
  const rest: ReceivedEvent[] = [];
  for await (const event of original) rest.push(event);
  const all = [head, ...rest];
  const terminal = all.at(-1)!;
  if (again.status === 204) {
    // The turn had ended before the reconnect, with nothing after the cursor: only possible when the stream was one event long.
    expect(all).toHaveLength(1);
    return all;
  }
  expect(again.status).toBe(200);
  const resumed = parseSse(await again.text());
  const wasLive = resumed.length > 0 && rest.length > 0;
  if (wasLive) tally.reconnectsDuringRun++;
  expect(resumed).toEqual(rest);
  expect(resumed.at(-1)).toEqual(terminal);
  return all;
}
