import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { ConversationView } from "../../src/conversation/conversation-api.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import type { Message } from "../../src/runtime/index.ts";
import { parseSse, type ReceivedEvent } from "./sse.ts";

export { scenario, type SentRequest } from "./scenario.ts";

/**
 * A request to the Worker, from an address of its own unless the test names one (`cf-connecting-ip`): the per-client
 * limiter counts only the turns a test means it to, even where one workerd serves many files (mutation runs).
 */
export async function call(path: string, init?: RequestInit): Promise<Response> {
  const request = new Request(`https://chat.test${path}`, init);
  if (!request.headers.has("cf-connecting-ip")) request.headers.set("cf-connecting-ip", `2001:db8::${crypto.randomUUID().slice(0, 4)}`);
  // The operator API is for a signed-in operator where the development sign-in is offered: the tests' operator signs in.
  if (OPERATOR_PATH.test(path) && !request.headers.has("authorization")) {
    const token = await operatorToken();
    if (token) request.headers.set("authorization", `Bearer ${token}`);
  }
  return exports.default.fetch(request);
}

const OPERATOR_PATH = /^\/v1\/(operator\/|conversations\/[^/]+\/operator\/)/;
let signedIn: Promise<string | undefined> | undefined;

/** A development sign-in token with the operator role, where the Worker offers that sign-in (else none). */
function operatorToken(): Promise<string | undefined> {
  signedIn ??= exports.default
    .fetch(
      new Request("https://chat.test/v1/dev/sign-in", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": "2001:db8::5e" },
        body: JSON.stringify({ name: "Sam", operator: true }),
      }),
    )
    .then(async (response) => (response.ok ? ((await response.json()) as { token: string }).token : undefined));
  return signedIn;
}

export function postMessage(conversationId: string, message: unknown): Promise<Response> {
  return call(`/v1/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message }),
  });
}

/** Sends a message, reads the whole SSE stream, and checks the stream's framing. */
export async function chat(conversationId: string, message: string): Promise<ReceivedEvent[]> {
  const res = await postMessage(conversationId, message);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const events = parseSse(await res.text());
  for (const [i, event] of events.entries()) {
    expect(event.sseEvent).toBe(event.type);
    if (i > 0) expect(event.id).toBe(events[i - 1]!.id + 1);
  }
  expect(events.filter((e) => e.type === "done" || e.type === "error")).toHaveLength(1);
  return events;
}

export interface ConversationJson {
  id: string;
  activeAgent: string;
  handoffCount: number;
  turn: number;
  status: string;
  lastEventId: number;
  usage: { modelCalls: number; inputTokens: number; outputTokens: number; toolCalls: number };
  compactions: Array<{ replaces: number; summary: string; turn: number; agent: string }>;
  messages: Message[];
  handoffs: Array<{ kind: string; from: string; to: string; turn: number; stepIndex?: number; reason?: string }>;
  /** Agents waiting for the conversation to come back, the next to get it last. */
  callers: Array<{ caller: string; callee: string; mode: string; toolCallId: string }>;
  pendingApprovals: Array<{ toolCallId: string; name: string; agent: string; expiresAt?: string }>;
  lastTurnStorage: ConversationView["lastTurnStorage"];
  activity: ConversationView["activity"];
  background: ConversationView["background"];
}

/** The stored conversation, checked to be a valid history for the model APIs. */
/**
 * The conversation as stored, read as the operator desk reads it: with what was written for the agents (system messages,
 * a hand-back's note), which the customer's view leaves out.
 */
export async function stored(conversationId: string): Promise<ConversationJson> {
  const res = await call(`/v1/operator/conversations/${conversationId}`);
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as ConversationJson;
  expect(findHistoryProblem(body.messages)).toBeNull();
  return body;
}

/**
 * Puts a follow-up for `agent` in the conversation's schedule, due now: what a tool's follow-up is when its time comes. The alarm is
 * set an hour on, so it never fires by itself while the test prepares; `runDurableObjectAlarm` on the stub runs it.
 */
export async function dueFollowUp(conversationId: string, agent: string, note = "Check in."): Promise<DurableObjectStub> {
  const stub = env.CONVERSATIONS.getByName(conversationId);
  await runInDurableObject(stub, async (_instance, state) => {
    new ConversationStore(state.storage).schedule.add({ kind: "follow-up", dueAt: Date.now() - 1, note, agent, toolCallId: "follow-up" });
    await state.storage.setAlarm(Date.now() + 3_600_000);
  });
  return stub;
}
