/**
 * The app's webhook (NOTIFY_URL, here the fake server's hook sink): a signed JSON POST when an
 * approval waits or expires, when a person answers or does not, when a follow-up is answered;
 * delivered by the conversation's alarm, never on a turn's path, and retried with backoff.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it, vi } from "vitest";
import { until } from "../support/until.ts";
import { call, chat, scenario } from "../support/worker.ts";

const SECRET = "notify-secret 9a7c!~value";
const hook = `${inject("fakeOpenAIUrl")}/hooks/app`;

interface Delivery {
  body: string;
  headers: Record<string, string>;
  status: number;
}

async function deliveries(conversationId: string): Promise<Delivery[]> {
  const all = (await (await fetch(hook)).json()) as Delivery[];
  return all.filter((d) => d.body.includes(conversationId));
}

/** The hook answers the next `count` deliveries about `conversationId` with `status`. */
async function answerNext(count: number, status: number, conversationId: string): Promise<void> {
  await fetch(`${hook}/answer`, { method: "POST", body: JSON.stringify({ count, status, match: conversationId }) });
}

async function hmac(payload: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(SECRET), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(payload)))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

describe("the app's webhook", () => {
  it("is told an approval waits, in a body signed with NOTIFY_SECRET, after the turn's stream has ended", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Expired." },
    ]);
    await chat(s.conversationId, s.tag("refund A1001"));
    const [first] = await until(
      () => deliveries(s.conversationId),
      (d) => d.length > 0,
      "the first delivery",
    );
    const body = JSON.parse(first!.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      reason: "request_waiting",
      alias: "approval_waiting",
      conversationId: s.conversationId,
      holder: "billing",
      pending: [{ toolCallId: "rf", name: "refund", agent: "billing", expiresAt: expect.any(String) }],
    });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(first!.headers["x-handoff-signature"] ?? "") ?? [];
    expect(v1).toBe(await hmac(`${t}.${first!.body}`));
    expect(first!.body).not.toContain(SECRET);
    expect(first!.headers).toMatchObject({ "content-type": "application/json", "user-agent": "handoff-runtime" });
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    // Then the deadline passes: the app hears that it expired.
    const expired = await until(
      () => deliveries(s.conversationId),
      (d) => d.some((x) => x.body.includes("request_expired")),
      "the expiry's delivery",
    );
    expect(JSON.parse(expired.find((x) => x.body.includes("request_expired"))!.body)).toMatchObject({ toolCallIds: ["rf"] });
  });

  it("is told a background delegation waits for the user, as a turn's wait is: the requests, under the call that asked, and the run", async () => {
    const s = await scenario((tag) => [
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost" }) }] },
      { toolCalls: [{ id: "bg", name: "search_for_parcel", arguments: JSON.stringify({ request: tag("Find A1002, redeliver it") }) }] },
      { text: "Started." },
      { toolCalls: [{ id: "rd1", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1002" }) }] },
    ]);
    await chat(s.conversationId, s.tag("my parcel is lost"));
    const delivered = await until(
      () => deliveries(s.conversationId),
      (d) => d.some((x) => x.body.includes("request_waiting")),
      "the wait's delivery",
    );
    const { entries } = (await (await call(`/v1/conversations/${s.conversationId}/schedule`)).json()) as {
      entries: Array<{ id: string; kind: string }>;
    };
    expect(JSON.parse(delivered.find((x) => x.body.includes("request_waiting"))!.body)).toMatchObject({
      reason: "request_waiting",
      holder: "shipping",
      background: entries.find((e) => e.kind === "delegation")!.id,
      pending: [
        {
          kind: "question",
          toolCallId: "rd1",
          name: "arrange_redelivery",
          agent: "parcel-search",
          delegated: { path: ["bg"], toolCallId: "rd1" },
        },
      ],
    });
  });

  it("names the signed-in user who owns the conversation", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Expired." },
    ]);
    const signedIn = await call("/v1/dev/sign-in", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `owner-${s.id.slice(3, 15)}` }),
    });
    const { token, user } = (await signedIn.json()) as { token: string; user: { id: string } };
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const { id } = (await (await call("/v1/conversations", { method: "POST", headers: auth })).json()) as { id: string };
    await (
      await call(`/v1/conversations/${id}/messages`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ message: s.tag("refund A1001") }),
      })
    ).text();
    const [first] = await until(
      () => deliveries(id),
      (d) => d.length > 0,
      "the first delivery",
    );
    expect(JSON.parse(first!.body)).toMatchObject({ reason: "request_waiting", conversationId: id, owner: user.id });
  });

  it("is tried again with backoff when the app answers 503, the same notification each time, until it is taken", async () => {
    const s = await personAnswered(2, 503);
    const stub = env.CONVERSATIONS.getByName(s.conversationId);
    const ids = new Set<string>();
    for (const expected of [2, 3]) {
      // The retry waits 30 s, then 60 s: made due here, as time passing would.
      const retry = await outbox(s.conversationId);
      // One message, kept across attempts under one id; the schedule's timers hold none of it.
      expect(retry).toHaveLength(1);
      expect(retry[0]!.attempt).toBe(expected - 1);
      ids.add(String(retry[0]!.id));
      expect(await runInDurableObject(stub, (_o, state) => state.storage.sql.exec(`SELECT * FROM schedule`).toArray())).toEqual([]);
      expect(Number(retry[0]!.due_at) - Date.now()).toBeGreaterThan(expected === 2 ? 25_000 : 55_000);
      // The alarm rings for the retry by itself.
      expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBe(Number(retry[0]!.due_at));
      await makeOutboxDue(s.conversationId);
      await until(answered(s.conversationId), (d) => d.length === expected, `attempt ${expected}`);
    }
    const tried = await answered(s.conversationId)();
    expect(tried.map((d) => d.status)).toEqual([503, 503, 200]);
    expect(new Set(tried.map((d) => (JSON.parse(d.body) as { id: string }).id)).size).toBe(1);
    expect(JSON.parse(tried[0]!.body)).toMatchObject({ reason: "person_answered", person: "support-desk", operator: { name: "Sam" } });
    expect(await outbox(s.conversationId)).toEqual([]);
    expect(ids.size).toBe(1);
  });

  it("is given up after six attempts, logged with where it went and what the last answer was", async () => {
    const warned = vi.spyOn(console, "warn");
    const s = await personAnswered(6, 503);
    for (let attempt = 2; attempt <= 6; attempt++) {
      await makeOutboxDue(s.conversationId);
      await until(answered(s.conversationId), (d) => d.length === attempt, `attempt ${attempt}`);
    }
    expect(await outbox(s.conversationId)).toEqual([]);
    await makeOutboxDue(s.conversationId);
    expect((await answered(s.conversationId)()).map((d) => d.status)).toEqual([503, 503, 503, 503, 503, 503]);
    const id = (JSON.parse((await answered(s.conversationId)())[0]!.body) as { id: string }).id;
    expect(warned).toHaveBeenCalledWith(`notification ${id} to NOTIFY_URL given up after 6 attempts: HTTP 503`);
    warned.mockRestore();
  });

  it("is taken by a 204 with no body, once", async () => {
    const s = await personAnswered(1, 204);
    await until(
      () => outbox(s.conversationId),
      (rows) => rows.length === 0,
      "the outbox emptied",
    );
    expect((await answered(s.conversationId)()).map((d) => d.status)).toEqual([204]);
    // Nothing waits any more: no alarm.
    const stub = env.CONVERSATIONS.getByName(s.conversationId);
    await until(
      () => runInDurableObject(stub, (_o, state) => state.storage.getAlarm()),
      (alarm) => alarm === null,
      "no alarm",
    );
  });
});

/** A person answers a conversation the desk holds; the hook answers the first `count` deliveries with `status`. */
async function personAnswered(count: number, status: number) {
  const s = await scenario([
    { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "a person" }) }] },
  ]);
  await chat(s.conversationId, s.tag("a person, please"));
  await answerNext(count, status, s.conversationId);
  const res = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "Sam here." }),
  });
  expect(res.status).toBe(200);
  await until(answered(s.conversationId), (d) => d.length === 1, "the first attempt");
  return s;
}

const answered = (conversationId: string) => () =>
  deliveries(conversationId).then((d) => d.filter((x) => x.body.includes("person_answered")));

const outbox = (conversationId: string) =>
  runInDurableObject(env.CONVERSATIONS.getByName(conversationId), (_o, state) => state.storage.sql.exec(`SELECT * FROM outbox`).toArray());

/** Makes the outbox's messages due now and runs the alarm, as time passing would. */
async function makeOutboxDue(conversationId: string): Promise<void> {
  const stub = env.CONVERSATIONS.getByName(conversationId);
  await runInDurableObject(stub, (_o, state) => void state.storage.sql.exec(`UPDATE outbox SET due_at = ?`, Date.now() - 1));
  await runDurableObjectAlarm(stub);
}
