/**
 * The network as an A2A agent, driven by the official client (`@a2a-js/sdk`'s ClientFactory, which
 * reads the agent card and picks the JSON-RPC interface) against `wrangler dev` with Node
 * compatibility off and the offline demo model: a double charge goes to billing, whose refund waits
 * for approval (input-required, the pending call in a data part); the client's decision resumes the
 * same task to its end, and GetTask reads it back with the holder in this project's extension; and
 * a turn streamed to the client's sendMessageStream as it runs.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { type GetTaskRequest, type Message, Role, type SendMessageRequest, TaskState } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-a2a-"));
let dev: WranglerDev;

before(async () => {
  dev = await startWranglerDev({ persistTo });
});

after(async () => {
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

type Content = { $case: "text"; value: string } | { $case: "data"; value: unknown };

/** A user's message as the SDK's client takes it, in a SendMessage request. */
function send(parts: Content[], more: { taskId?: string; contextId?: string } = {}): SendMessageRequest {
  const message: Message = {
    messageId: crypto.randomUUID(),
    role: Role.ROLE_USER,
    parts: parts.map((content) => ({ content, metadata: undefined, filename: "", mediaType: "" })),
    contextId: more.contextId ?? "",
    taskId: more.taskId ?? "",
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return { tenant: "", message, configuration: undefined, metadata: undefined };
}

it("reads the card, runs a handoff to billing that waits for approval, and resumes the task with the client's decision", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  const sent = await client.sendMessage(send([{ $case: "text", value: "I was charged twice for order A1001" }]));
  assert.ok("status" in sent, `a task, not ${JSON.stringify(sent)}`);
  assert.equal(sent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const pending = sent.status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value as {
    pending: Array<{ toolCallId: string; name: string }>;
  };
  assert.deepEqual(
    pending.pending.map((p) => p.name),
    ["refund"],
  );
  assert.equal((sent.metadata?.["urn:handoff-runtime:a2a:handoffs:v1"] as { holder: string }).holder, "billing");
  const decisions = pending.pending.map((p) => ({ toolCallId: p.toolCallId, approved: true }));
  const decided = await client.sendMessage(send([{ $case: "data", value: { decisions } }], { taskId: sent.id, contextId: sent.contextId }));
  assert.ok("status" in decided);
  assert.equal(decided.id, sent.id);
  assert.equal(decided.status?.state, TaskState.TASK_STATE_COMPLETED);
  const request: GetTaskRequest = { tenant: "", id: sent.id, historyLength: undefined };
  const read = await client.getTask(request);
  assert.equal(read.status?.state, TaskState.TASK_STATE_COMPLETED);
  const last = read.history.at(-1);
  assert.equal(last?.role, Role.ROLE_AGENT);
  assert.match(String(last?.parts[0]?.content?.value), /refund/i);
});

it("streams a turn to the SDK's sendMessageStream: the task, the text as it is produced, the handoff, the final status", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  const kinds: string[] = [];
  let text = "";
  let holder = "";
  let last: TaskState | undefined;
  for await (const event of client.sendMessageStream(send([{ $case: "text", value: "Where is order A1002?" }]))) {
    const payload = event.payload;
    if (!payload) continue;
    kinds.push(payload.$case);
    if (payload.$case === "artifactUpdate") text += String(payload.value.artifact?.parts[0]?.content?.value ?? "");
    if (payload.$case === "statusUpdate") {
      last = payload.value.status?.state;
      const extension = payload.value.metadata?.["urn:handoff-runtime:a2a:handoffs:v1"] as { holder?: string } | undefined;
      if (extension?.holder) holder = extension.holder;
    }
  }
  assert.equal(kinds[0], "task");
  assert.ok(kinds.filter((k) => k === "artifactUpdate").length > 1, `text in chunks: ${kinds.join(",")}`);
  assert.equal(holder, "shipping");
  assert.match(text, /A1002/);
  assert.equal(last, TaskState.TASK_STATE_COMPLETED);
});
