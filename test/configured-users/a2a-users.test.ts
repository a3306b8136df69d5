/**
 * A2A with signed-in users: a context a user starts is theirs; ListTasks without a context lists
 * the latest task of each of their own conversations, and another user's task is "task not found".
 */
import { importJWK, type JWK, SignJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import type { Task } from "../../src/a2a/a2a-wire.ts";
import { scenario } from "../support/scenario.ts";
import { call } from "../support/worker.ts";

const { keys } = inject("jwks");

async function mint(user: string): Promise<string> {
  const jwk = keys.rs1 as JWK;
  return new SignJWT({ sub: user, iss: "https://idp.test", aud: "handoff-chat" })
    .setProtectedHeader({ alg: jwk.alg!, kid: "rs1" })
    .setExpirationTime("10m")
    .sign(await importJWK(jwk, jwk.alg));
}

async function rpc(token: string, method: string, params: unknown) {
  const res = await call("/v1/a2a", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await res.json()) as {
    result: { task: Task; tasks: Task[]; nextPageToken: string; pageSize: number };
    error: { code: number; message: string };
  };
}

const say = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } });

describe("A2A for signed-in users", () => {
  it("lists a user's own latest tasks, and finds no task of someone else's", async () => {
    const s = await scenario([{ text: "One." }, { text: "Two." }, { text: "Three." }]);
    const [ada, bob] = [await mint(`a2a-ada-${s.id}`), await mint(`a2a-bob-${s.id}`)];
    const first = (await rpc(ada, "SendMessage", say(s.tag("first")))).result.task;
    const second = (await rpc(ada, "SendMessage", say(s.tag("second")))).result.task;
    const bobs = (await rpc(bob, "SendMessage", say(s.tag("mine")))).result.task;
    expect((await rpc(ada, "ListTasks", {})).result.tasks.map((t) => t.id)).toEqual([second.id, first.id]);
    expect((await rpc(bob, "ListTasks", {})).result.tasks.map((t) => t.id)).toEqual([bobs.id]);
    expect((await rpc(bob, "GetTask", { id: first.id })).error.code).toBe(-32001);
    expect((await rpc(bob, "ListTasks", { contextId: first.contextId })).error.code).toBe(-32001);
    expect((await rpc(bob, "SendMessage", { message: { ...say(s.tag("in")).message, contextId: first.contextId } })).error.code).toBe(
      -32001,
    );
  });

  it("pages a user's list with nextPageToken, newest first, and refuses a page token it did not give", async () => {
    const s = await scenario([{ text: "One." }, { text: "Two." }, { text: "Three." }]);
    const cy = await mint(`a2a-cy-${s.id}`);
    const made: Task[] = [];
    for (const word of ["first", "second", "third"]) made.push((await rpc(cy, "SendMessage", say(s.tag(word)))).result.task);
    const first = (await rpc(cy, "ListTasks", { pageSize: 2 })).result;
    expect(first.tasks.map((t) => t.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(first.nextPageToken).not.toBe("");
    const second = (await rpc(cy, "ListTasks", { pageSize: 2, pageToken: first.nextPageToken })).result;
    expect(second.tasks.map((t) => t.id)).toEqual([made[0]!.id]);
    expect(second.nextPageToken).toBe("");
    for (const pageToken of ["not-a-token", "x12"])
      expect((await rpc(cy, "ListTasks", { pageToken })).error).toMatchObject({
        code: -32602,
        message: "pageToken is the nextPageToken of a page before.",
      });
  });
});
