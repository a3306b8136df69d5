/**
 * A2A push notifications: an A2A client names where a task's updates go, and the conversation's
 * outbox delivers each one (the alarm, retries, the app's signature) with the client's token and
 * authentication — when a task waiting for approval is resumed to its end, and when the person
 * holding a conversation answers. Configs are read back without the credentials, listed, deleted.
 */
import { env, evictDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { until } from "../support/until.ts";
import { call, scenario } from "../support/worker.ts";

const hook = `${inject("fakeOpenAIUrl")}/hooks/push`;
let next = 0;

interface Delivery {
  body: string;
  headers: Record<string, string>;
}

interface TaskShape {
  id: string;
  contextId: string;
  status: { state: string };
}

/** A JSON-RPC answer: SendMessage's `{ task }`, a config, or an error. */
interface Answer {
  result: { task: TaskShape } & Record<string, unknown>;
  error?: { code: number };
}

async function rpc(method: string, params: unknown): Promise<Answer> {
  const res = await call("/v1/a2a", {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++next, method, params }),
  });
  return (await res.json()) as Answer;
}

const message = (text: string, more: Record<string, unknown> = {}) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...more },
});
const pushes = async (taskId: string) =>
  ((await (await fetch(hook)).json()) as Delivery[])
    .filter((d) => d.body.includes(taskId))
    .map((d) => ({ ...d, json: JSON.parse(d.body) as { statusUpdate: { status: { state?: string } } } }));
/** The state each push of a task said, in the order they were delivered. */
const pushedStates = async (taskId: string) => (await pushes(taskId)).map((d) => d.json.statusUpdate.status.state);

describe("A2A push notifications", () => {
  it("are delivered when a task waiting for approval is resumed to its end, with the client's token and authentication", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) }] },
      { text: "Refunded." },
    ]);
    const waiting = (await rpc("SendMessage", message(s.tag("refund A1001")))).result.task;
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const config = {
      taskId: waiting.id,
      id: "app",
      url: hook,
      token: "client-token-1",
      authentication: { scheme: "Bearer", credentials: "push-cred 88x" },
    };
    const created = await rpc("CreateTaskPushNotificationConfig", config);
    // The credentials are kept, not shown back.
    expect(created.result).toEqual({ ...config, authentication: { scheme: "Bearer", credentials: "" } });
    expect((await rpc("GetTaskPushNotificationConfig", { taskId: waiting.id, id: "app" })).result).toEqual(created.result);
    // The object starts again from storage before the task is resumed: the config is read back from there.
    const stub = env.CONVERSATIONS.getByName(waiting.contextId);
    await evictDurableObject(stub);
    const decisions = { decisions: [{ toolCallId: "rf", approved: true }] };
    const done = await rpc("SendMessage", message("", { taskId: waiting.id, contextId: waiting.contextId, parts: [{ data: decisions }] }));
    expect(done.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    const [push] = await until(
      () => pushes(waiting.id),
      (d) => d.length > 0,
      "the push",
    );
    expect(push!.json).toMatchObject({
      statusUpdate: {
        taskId: waiting.id,
        contextId: waiting.contextId,
        status: { state: "TASK_STATE_COMPLETED" },
        // Who holds the conversation now, as the task's own metadata says it.
        metadata: { "urn:handoff-runtime:a2a:handoffs:v1": { holder: "billing" } },
      },
    });
    expect(push!.headers).toMatchObject({ "x-a2a-notification-token": "client-token-1", authorization: "Bearer push-cred 88x" });
    expect(push!.headers["x-handoff-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    // Deleted, it is gone; deleting it again says there is none.
    expect((await rpc("DeleteTaskPushNotificationConfig", { taskId: waiting.id, id: "app" })).result).toEqual({});
    expect((await rpc("ListTaskPushNotificationConfigs", { taskId: waiting.id })).result).toEqual({ configs: [], nextPageToken: "" });
    expect((await rpc("DeleteTaskPushNotificationConfig", { taskId: waiting.id, id: "app" })).error?.code).toBe(-32602);
  });

  it("are delivered for a task whose SendMessage named the config, even when its turn ends at once", async () => {
    const s = await scenario([{ text: "Hello there." }, { text: "Again." }]);
    const push = { url: hook, token: "sent-with-the-message" };
    const first = (await rpc("SendMessage", { ...message(s.tag("hello")), configuration: { taskPushNotificationConfig: push } })).result
      .task;
    expect(first.status.state).toBe("TASK_STATE_COMPLETED");
    const [delivered] = await until(
      () => pushes(first.id),
      (d) => d.length > 0,
      "the push",
    );
    expect(delivered!.headers["x-a2a-notification-token"]).toBe("sent-with-the-message");
    expect((await rpc("ListTaskPushNotificationConfigs", { taskId: first.id })).result).toMatchObject({ configs: [{ url: hook }] });
    // The next task of the context has its own configs: none unless its message names one.
    const second = (await rpc("SendMessage", message("again", { contextId: first.contextId }))).result.task;
    expect((await rpc("ListTaskPushNotificationConfigs", { taskId: second.id })).result).toEqual({ configs: [], nextPageToken: "" });
    // A config the Worker would not call is refused before the message starts anything.
    const refused = await rpc("SendMessage", {
      ...message("third", { contextId: first.contextId }),
      configuration: { taskPushNotificationConfig: { url: "ftp://example.com" } },
    });
    expect(refused.error?.code).toBe(-32602);
  });

  it("say each way a task ends: input required when it waits for approval, failed, canceled", async () => {
    const push = { taskPushNotificationConfig: { url: hook } };
    const stateOf = async (taskId: string) =>
      (
        await until(
          () => pushedStates(taskId),
          (states) => states.length > 0,
          "the push",
        )
      )[0];

    const approval = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) }] },
    ]);
    const waiting = (await rpc("SendMessage", { ...message(approval.tag("refund A1001")), configuration: push })).result.task;
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(await stateOf(waiting.id)).toBe("TASK_STATE_INPUT_REQUIRED");

    const broken = await scenario([{ status: 400, error: { message: "The model refused the request." } }]);
    const failed = (await rpc("SendMessage", { ...message(broken.tag("hello")), configuration: push })).result.task;
    expect(failed.status.state).toBe("TASK_STATE_FAILED");
    expect(await stateOf(failed.id)).toBe("TASK_STATE_FAILED");

    const slow = await scenario([{ text: "This answer never finishes.", holdAfter: 1 }]);
    const started = (
      await rpc("SendMessage", { ...message(slow.tag("take a while")), configuration: { ...push, returnImmediately: true } })
    ).result.task;
    expect((await rpc("CancelTask", { id: started.id })).result).toMatchObject({ status: { state: "TASK_STATE_CANCELED" } });
    expect(await stateOf(started.id)).toBe("TASK_STATE_CANCELED");
    await slow.release();
  });

  it("say nothing while a person holds the task, then once that it is completed when they answer", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "a person" }) }] },
    ]);
    const configuration = { taskPushNotificationConfig: { url: hook } };
    const held = (await rpc("SendMessage", { ...message(s.tag("a person, please")), configuration })).result.task;
    expect(held.status.state).toBe("TASK_STATE_WORKING");
    const answered = await call(`/v1/conversations/${held.contextId}/operator/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "Sam here." }),
    });
    expect(answered.status).toBe(200);
    await until(
      () => pushedStates(held.id),
      (states) => states.length > 0,
      "the push",
    );
    // The outbox delivers in order, so a push queued when the person took the task would come first.
    expect(await pushedStates(held.id)).toEqual(["TASK_STATE_COMPLETED"]);
  });

  it("are delivered when the person holding the conversation answers: the task that waited for them is completed", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "a person" }) }] },
    ]);
    const held = (await rpc("SendMessage", message(s.tag("a person, please")))).result.task;
    expect(held.status.state).toBe("TASK_STATE_WORKING");
    await rpc("CreateTaskPushNotificationConfig", { taskId: held.id, url: hook });
    expect(await pushes(held.id)).toEqual([]);
    const answered = await call(`/v1/conversations/${held.contextId}/operator/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "Sam here." }),
    });
    expect(answered.status).toBe(200);
    const [push] = await until(
      () => pushes(held.id),
      (d) => d.length > 0,
      "the push",
    );
    expect(push!.json.statusUpdate).toMatchObject({ taskId: held.id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(push!.headers["authorization"]).toBeUndefined();
  });

  it("are delivered when the person holding the conversation hands it back: the task is completed", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "a person" }) }] },
    ]);
    const held = (await rpc("SendMessage", message(s.tag("a person, please")))).result.task;
    await rpc("CreateTaskPushNotificationConfig", { taskId: held.id, url: hook });
    const back = await call(`/v1/conversations/${held.contextId}/operator/handoff`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ to: "triage", note: "sorted by phone" }),
    });
    expect(back.status).toBe(200);
    await until(
      () => pushedStates(held.id),
      (states) => states.length > 0,
      "the push",
    );
    expect(await pushedStates(held.id)).toEqual(["TASK_STATE_COMPLETED"]);
  });
});
