/**
 * The network as an AG-UI agent, driven by the official client (`@ag-ui/client`'s HttpAgent, which
 * checks every event against the protocol's rules) against `wrangler dev` with Node compatibility
 * off and the offline demo model: a handoff turn with its tool call and the holder in the run's
 * state; a refund that waits for approval as an interrupt, resumed by the client's `resume`; a
 * person holding the conversation; and each kind of bad input answered with this API's error and
 * nothing stored changed.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { type BaseEvent, HttpAgent, type Message } from "@ag-ui/client";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-ag-ui-"));
let dev: WranglerDev;

before(async () => {
  dev = await startWranglerDev({ persistTo, vars: { DEMO_DELAY_MS: "5" } });
});

after(async () => {
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

/** An agent on a thread of its own (or `threadId`), as a frontend makes one. */
function agentFor(headers: Record<string, string> = {}, threadId?: string): HttpAgent {
  return new HttpAgent({ url: `${dev.url}/v1/ag-ui`, headers, ...(threadId ? { threadId } : {}) });
}

function say(agent: HttpAgent, text: string): void {
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
}

/** Runs the agent, keeping every event it was sent. */
async function run(agent: HttpAgent, parameters: Parameters<HttpAgent["runAgent"]>[0] = {}): Promise<BaseEvent[]> {
  const events: BaseEvent[] = [];
  await agent.runAgent(parameters, { onEvent: ({ event }) => void events.push(event) });
  return events;
}

/** A run of `agent` that starts with a message of its own. */
function runSaying(agent: HttpAgent, text: string): Promise<BaseEvent[]> {
  say(agent, text);
  return run(agent);
}

const typesOf = (events: BaseEvent[]) => events.map((e) => e.type);
const holderOf = (agent: HttpAgent) => (agent.state as { holder: { name: string; kind: string } }).holder;
const textOf = (messages: Message[]) =>
  messages
    .filter((m) => m.role === "assistant")
    .map((m) => m.content ?? "")
    .join(" ");

async function signIn(name: string, operator = false): Promise<Record<string, string>> {
  const res = await fetch(`${dev.url}/v1/dev/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, operator }),
  });
  const { token } = (await res.json()) as { token: string };
  return { authorization: `Bearer ${token}` };
}

/** The conversation as stored, as its owner reads it. */
async function stored(threadId: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(`${dev.url}/v1/conversations/${threadId}`, { headers });
  const { lastTurnStorage: _storage, ...view } = (await res.json()) as Record<string, unknown>;
  return view;
}

/**
 * The stored conversation once what follows its first turn has been written: its title, a model
 * call of its own (until then its owner's list shows the first message as the title).
 */
async function settled(threadId: string, headers: Record<string, string>, firstMessage: string): Promise<unknown> {
  for (let tries = 0; ; tries++) {
    assert.ok(tries < 100, "the conversation was titled within 10 s");
    const res = await fetch(`${dev.url}/v1/conversations`, { headers });
    const { conversations } = (await res.json()) as { conversations: Array<{ id: string; title: string }> };
    const title = conversations.find((c) => c.id === threadId)?.title;
    if (title && title !== firstMessage) return stored(threadId, headers);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it("runs a handoff turn: the steps, the agents' text named after them, the tool call and its result, the handoff as an activity and the holder in the state", async () => {
  const agent = agentFor();
  say(agent, "Where is order A1002?");
  const events = await run(agent);
  const types = typesOf(events);
  assert.equal(types[0], "RUN_STARTED");
  assert.equal(types.at(-1), "RUN_FINISHED");
  assert.deepEqual((events.at(-1) as BaseEvent & { outcome?: unknown }).outcome, { type: "success" });
  for (const type of ["STEP_STARTED", "STEP_FINISHED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"])
    assert.ok(types.includes(type as BaseEvent["type"]), `${type} in ${types.join(",")}`);
  for (const type of ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"])
    assert.ok(types.includes(type as BaseEvent["type"]), `${type} in ${types.join(",")}`);
  const names = events.filter((e) => e.type === "TEXT_MESSAGE_START").map((e) => (e as BaseEvent & { name?: string }).name);
  assert.ok(names.includes("shipping"), `a message of shipping's: ${names.join(",")}`);
  const handoff = agent.messages.find((m) => m.role === "activity");
  assert.ok(handoff && handoff.role === "activity" && handoff.activityType === "handoff");
  assert.deepEqual([handoff.content.from, handoff.content.to, handoff.content.kind], ["triage", "shipping", "transfer"]);
  assert.deepEqual(holderOf(agent), { name: "shipping", kind: "agent" });
  assert.match(textOf(agent.messages), /A1002/);
  const calls = agent.messages.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []) : []));
  const results = agent.messages.filter((m) => m.role === "tool");
  assert.ok(
    calls.some((c) => c.function.name.startsWith("transfer_to_")),
    "the transfer is a tool call in the thread",
  );
  assert.equal(results.length, calls.length, "every call has its result");

  // The next message on the thread goes to whoever holds it now.
  say(agent, "And when will it arrive?");
  const next = await run(agent);
  assert.equal(typesOf(next).at(-1), "RUN_FINISHED");
  assert.equal(next.filter((e) => e.type === "TEXT_MESSAGE_START").map((e) => (e as BaseEvent & { name?: string }).name)[0], "shipping");
});

it("ends a run whose refund waits for approval with an interrupt, and the client's resume runs the refund to its end", async () => {
  const agent = agentFor();
  say(agent, "I was charged twice for order A1001");
  const events = await run(agent);
  const finished = events.at(-1) as BaseEvent & { outcome: { type: string; interrupts: Array<Record<string, unknown>> } };
  assert.equal(finished.type, "RUN_FINISHED");
  assert.equal(finished.outcome.type, "interrupt");
  const [interrupt] = finished.outcome.interrupts;
  assert.equal(interrupt?.reason, "tool_approval");
  assert.equal(interrupt?.id, interrupt?.toolCallId);
  assert.deepEqual((interrupt?.responseSchema as { required: string[] }).required, ["approved"]);
  assert.equal(agent.pendingInterrupts.length, 1);
  assert.deepEqual(holderOf(agent), { name: "billing", kind: "agent" });

  const resumed = await run(agent, { resume: [{ interruptId: String(interrupt!.id), status: "resolved", payload: { approved: true } }] });
  assert.deepEqual((resumed.at(-1) as BaseEvent & { outcome?: unknown }).outcome, { type: "success" });
  assert.ok(
    resumed.some((e) => e.type === "TOOL_CALL_RESULT" && (e as BaseEvent & { toolCallId: string }).toolCallId === interrupt!.toolCallId),
  );
  assert.equal(agent.pendingInterrupts.length, 0);
  assert.match(textOf(agent.messages), /refund/i);
});

it("asks a question as an interrupt with the question's schema, and the client's resume with the answer books it", async () => {
  const agent = agentFor();
  const events = await runSaying(agent, "Please redeliver order A1001");
  const finished = events.at(-1) as BaseEvent & { outcome: { type: string; interrupts: Array<Record<string, unknown>> } };
  assert.equal(finished.outcome.type, "interrupt");
  const [question] = finished.outcome.interrupts;
  assert.equal(question?.reason, "input_required");
  assert.match(String(question?.message), /When should order A1001 come again/);
  const schema = question?.responseSchema as { properties: { day: { format: string }; where: { enum: string[] } } };
  assert.equal(schema.properties.day.format, "date");
  assert.deepEqual(schema.properties.where.enum, ["front door", "neighbour", "parcel locker"]);
  // An answer that does not fit the schema is refused, and the interrupt stays open.
  await assert.rejects(
    run(agent, { resume: [{ interruptId: String(question!.id), status: "resolved", payload: { day: "soon", where: "roof" } }] }),
    (error: Error) => /invalid_answer|400/.test(error.message),
  );
  const resumed = await run(agent, {
    resume: [{ interruptId: String(question!.id), status: "resolved", payload: { day: "2026-12-08", where: "neighbour" } }],
  });
  assert.deepEqual((resumed.at(-1) as BaseEvent & { outcome?: unknown }).outcome, { type: "success" });
  assert.match(textOf(agent.messages), /comes again on 2026-12-08; it will be left at the neighbour/);
});

it("leaves a client tool for the application (pendingToolCallIds), and a tool message in the next input answers it", async () => {
  const agent = agentFor();
  const events = await runSaying(agent, "I need a delivery slot for order A1002");
  const finished = events.at(-1) as BaseEvent & { outcome: { type: string; pendingToolCallIds?: string[] } };
  assert.equal(finished.outcome.type, "success");
  const [pending] = finished.outcome.pendingToolCallIds ?? [];
  assert.ok(pending, "the client tool's call is left for the application");
  const start = events.find((e) => e.type === "TOOL_CALL_START" && (e as BaseEvent & { toolCallId: string }).toolCallId === pending);
  assert.equal((start as BaseEvent & { toolCallName: string }).toolCallName, "choose_delivery_slot");
  agent.addMessage({ id: crypto.randomUUID(), role: "tool", toolCallId: pending!, content: JSON.stringify({ slot: "Tue 9:00-12:00" }) });
  const next = await run(agent);
  assert.ok(next.some((e) => e.type === "TOOL_CALL_RESULT" && (e as BaseEvent & { toolCallId: string }).toolCallId === pending));
  assert.match(textOf(agent.messages), /booked for Tue 9:00-12:00/);
});

it("asks what the tracking MCP server elicits as an interrupt with the server's form, and the resume goes back to the server", async () => {
  const agent = agentFor();
  const events = await runSaying(agent, "Please hold the parcel of order A1002 at a depot");
  const finished = events.at(-1) as BaseEvent & { outcome: { type: string; interrupts: Array<Record<string, unknown>> } };
  assert.equal(finished.outcome.type, "interrupt");
  const [form] = finished.outcome.interrupts;
  assert.equal(form?.reason, "elicitation");
  assert.deepEqual((form?.metadata as { server: string; mode: string }).server, "tracking");
  assert.deepEqual((form?.responseSchema as { properties: { depot: { enum: string[] } } }).properties.depot.enum, [
    "Leeds",
    "London",
    "Bristol",
  ]);
  const resumed = await run(agent, {
    resume: [{ interruptId: String(form!.id), status: "resolved", payload: { confirm: true, depot: "Bristol" } }],
  });
  assert.deepEqual((resumed.at(-1) as BaseEvent & { outcome?: unknown }).outcome, { type: "success" });
  assert.match(textOf(agent.messages), /held at the Bristol depot/);
});

it("shows a person holding the conversation in the run's state, and a follow run brings their answers and their hand back", async () => {
  const agent = agentFor();
  say(agent, "I want to talk to a person");
  const events = await run(agent);
  assert.deepEqual((events.at(-1) as BaseEvent & { outcome?: unknown }).outcome, { type: "success" });
  assert.deepEqual(holderOf(agent), { name: "support-desk", kind: "person" });
  assert.ok(agent.messages.some((m) => m.role === "activity" && m.content.to === "support-desk"));

  const operator = await signIn("Sam AG-UI", true);
  const asOperator = (path: string, body: unknown) =>
    fetch(`${dev.url}/v1/conversations/${agent.threadId}/operator/${path}`, {
      method: "POST",
      headers: { ...operator, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const follow = () => run(agent, { forwardedProps: { follow: true } });
  // A follow run waits for the person's next message: it comes while the run is open.
  const waiting = follow();
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await asOperator("messages", { message: "Sam here, looking at it." })).status, 200);
  const answered = await waiting;
  assert.deepEqual(typesOf(answered), ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"]);
  // The name shown is the signed-in operator's.
  assert.equal((answered[1] as BaseEvent & { name?: string }).name, "Sam AG-UI");
  // One that came before the follow run is sent at once, and none twice.
  assert.equal((await asOperator("messages", { message: "Refund issued." })).status, 200);
  const caughtUp = await follow();
  const said = caughtUp.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => (e as BaseEvent & { delta: string }).delta);
  assert.deepEqual(said, ["Refund issued."]);
  // The hand back ends the hold: an activity, and an agent holds the conversation again.
  const back = follow();
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal((await asOperator("handoff", { to: "triage", note: "sorted" })).status, 200);
  const handedBack = await back;
  assert.ok(handedBack.some((e) => e.type === "ACTIVITY_SNAPSHOT"));
  assert.deepEqual(holderOf(agent), { name: "triage", kind: "agent" });
  assert.match(textOf(agent.messages), /Sam here, looking at it\. Refund issued\./);
});

it("refuses bad input with this API's error before any event, and changes nothing stored", async () => {
  const ada = await signIn("Ada AG-UI");
  const bob = await signIn("Bob AG-UI");
  // Not a RunAgentInput.
  const raw = await fetch(`${dev.url}/v1/ag-ui`, { method: "POST", headers: { ...ada, "content-type": "application/json" }, body: "{}" });
  assert.equal(raw.status, 400);
  assert.equal(((await raw.json()) as { error: { code: string } }).error.code, "invalid_request");

  // Ada's thread waits for an approval.
  const agent = agentFor(ada);
  say(agent, "I was charged twice for order A1001");
  await run(agent);
  const before = await settled(agent.threadId, ada, "I was charged twice for order A1001");

  const refusals: Array<[string, () => Promise<unknown>, RegExp]> = [
    ["someone else's thread", () => runSaying(agentFor(bob, agent.threadId), "Refund me too"), /HTTP 404.*conversation_not_found/],
    ["a new run while interrupts are open", () => runSaying(agentFor(ada, agent.threadId), "Never mind that"), /HTTP 409.*request_pending/],
    [
      "a resume that answers no open interrupt",
      () =>
        run(agentFor(ada, agent.threadId), { resume: [{ interruptId: "no-such-call", status: "resolved", payload: { approved: true } }] }),
      /HTTP 404.*request_not_found/,
    ],
    [
      "a resume whose payload is not an approval",
      () =>
        run(agentFor(ada, agent.threadId), {
          resume: [{ interruptId: agent.pendingInterrupts[0]!.id, status: "resolved", payload: "yes" }],
        }),
      /HTTP 400.*invalid_request/,
    ],
  ];
  for (const [what, attempt, answer] of refusals) {
    await assert.rejects(attempt(), (error: Error) => answer.test(error.message), what);
    assert.deepEqual(await stored(agent.threadId, ada), before, `${what}: nothing stored changed`);
  }

  // A resume on a thread where nothing waits.
  const idle = agentFor(ada);
  say(idle, "Where is order A1002?");
  await run(idle);
  await assert.rejects(run(agentFor(ada, idle.threadId), { resume: [{ interruptId: "x", status: "cancelled" }] }), (error: Error) =>
    /HTTP 409.*no_pending_request/.test(error.message),
  );
});
