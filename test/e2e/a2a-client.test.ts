/**
 * The network as an A2A agent, driven by the official client (`@a2a-js/sdk`'s ClientFactory, which
 * reads the agent card and picks the JSON-RPC interface) against `wrangler dev` with Node
 * compatibility off and the offline demo model: a double charge goes to billing, whose refund waits
 * for approval (input-required, the pending call in a data part); the client's decision resumes the
 * same task to its end, and GetTask reads it back with the holder in this project's extension; a
 * turn streamed to the client's sendMessageStream as it runs; two signed-in users (the development
 * sign-in) kept apart by ListTasks and GetTask, with a second task in one context and a forged token
 * refused; and a finished task not cancelable — the spec's codes as the SDK's typed errors.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { type GetTaskRequest, type ListTasksRequest, type Message, Role, type SendMessageRequest, TaskState } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { SignJWT } from "jose";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-a2a-"));
let dev: WranglerDev;

before(async () => {
  // The demo model's words come 20 ms apart: a stream is long enough to drop halfway.
  dev = await startWranglerDev({ persistTo, vars: { DEMO_DELAY_MS: "20" } });
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
  // The message the client sent into the waiting task is in its history, after what the agents said before it and before the refund's answer.
  const decidedAt = read.history.findIndex((m) => m.role === Role.ROLE_USER && m.parts[0]?.content?.$case === "data");
  assert.ok(decidedAt > 0, `the decision in the history: ${JSON.stringify(read.history.map((m) => m.role))}`);
  assert.deepEqual(read.history[decidedAt]?.parts[0]?.content?.value, { decisions });
  assert.ok(decidedAt < read.history.length - 1);
});

it("asks the user over A2A: a question, a client tool and an elicitation are input-required with the request in a data part, answered by data parts", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  type Pending = { pending: Array<{ toolCallId: string; kind: string; name: string; message?: string; schema?: Record<string, unknown> }> };
  const pendingOf = (task: { status?: { message?: Message } }) =>
    (task.status?.message?.parts.find((p) => p.content?.$case === "data")?.content?.value as Pending).pending;
  const sent = await client.sendMessage(send([{ $case: "text", value: "Please redeliver order A1001" }]));
  assert.ok("status" in sent);
  assert.equal(sent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  const [question] = pendingOf(sent);
  assert.equal(question?.kind, "question");
  assert.match(String(question?.message), /When should order A1001 come again/);
  assert.ok(question?.schema, "the question's schema is in the data part");
  // An answer that does not fit is refused with the spec's invalid-params, and the task still waits.
  await assert.rejects(
    client.sendMessage(
      send([{ $case: "data", value: { decisions: [{ toolCallId: question!.toolCallId, answer: { day: "soon" } }] } }], {
        taskId: sent.id,
        contextId: sent.contextId,
      }),
    ),
    /does not fit/,
  );
  const answered = await client.sendMessage(
    send(
      [{ $case: "data", value: { decisions: [{ toolCallId: question!.toolCallId, answer: { day: "2026-12-08", where: "front door" } }] } }],
      {
        taskId: sent.id,
        contextId: sent.contextId,
      },
    ),
  );
  assert.ok("status" in answered);
  assert.equal(answered.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(String(answered.history.at(-1)?.parts[0]?.content?.value), /comes again on 2026-12-08/);

  const slot = await client.sendMessage(
    send([{ $case: "text", value: "I need a delivery slot for order A1002" }], { contextId: sent.contextId }),
  );
  assert.ok("status" in slot);
  const [tool] = pendingOf(slot);
  assert.equal(tool?.kind, "client-tool");
  const picked = await client.sendMessage(
    send([{ $case: "data", value: { decisions: [{ toolCallId: tool!.toolCallId, answer: { slot: "Mon 14:00-17:00" } }] } }], {
      taskId: slot.id,
      contextId: slot.contextId,
    }),
  );
  assert.ok("status" in picked);
  assert.equal(picked.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(String(picked.history.at(-1)?.parts[0]?.content?.value), /booked for Mon 14:00-17:00/);

  // The tracking MCP server's elicitation: its form in the data part, its content sent back to the server.
  const hold = await client.sendMessage(
    send([{ $case: "text", value: "Please hold the parcel of order A1002" }], { contextId: sent.contextId }),
  );
  assert.ok("status" in hold);
  const [form] = pendingOf(hold);
  assert.equal(form?.kind, "elicitation");
  const held = await client.sendMessage(
    send([{ $case: "data", value: { decisions: [{ toolCallId: form!.toolCallId, answer: { confirm: true, depot: "Leeds" } }] } }], {
      taskId: hold.id,
      contextId: hold.contextId,
    }),
  );
  assert.ok("status" in held);
  assert.equal(held.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(String(held.history.at(-1)?.parts[0]?.content?.value), /held at the Leeds depot/);
});

it("speaks A2A's own media type to a client that asks for it, and answers a request whose params are not an object with -32602 and its id", async () => {
  const seen: string[] = [];
  // The official client, its requests sent as application/a2a+json and asking for it back.
  const fetchImpl: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    if (init?.method === "POST") {
      headers.set("content-type", "application/a2a+json");
      headers.set("accept", "application/a2a+json");
    }
    const res = await fetch(input, { ...init, headers });
    if (init?.method === "POST") seen.push(res.headers.get("content-type") ?? "");
    return res;
  };
  const client = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })] }).createFromUrl(dev.url);
  const sent = await client.sendMessage(send([{ $case: "text", value: "Where is order A1002?" }]));
  assert.ok("status" in sent);
  assert.equal(sent.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.deepEqual(seen, ["application/a2a+json; charset=utf-8"]);
  // No client sends params that are not an object: the request goes by hand.
  for (const params of [[1, 2], "x", 7]) {
    const res = await fetch(`${dev.url}/v1/a2a`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "req-9", method: "GetTask", params }),
    });
    const body = (await res.json()) as { id: unknown; error: { code: number } };
    assert.deepEqual([res.headers.get("content-type"), body.id, body.error.code], ["application/json; charset=utf-8", "req-9", -32602]);
  }
  // An invalid request whose id can still be read keeps it.
  const res = await fetch(`${dev.url}/v1/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "1.0", id: 12, method: "GetTask", params: {} }),
  });
  assert.deepEqual(((await res.json()) as { id: unknown; error: { code: number } }).id, 12);
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

it("resubscribes after a dropped stream: the task as it stands, then the rest of the turn; the step's artifact sent again whole replaces the part the client had", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  // Artifacts as a client assembles them: a chunk appends, or (append false) starts the artifact again.
  const artifacts = new Map<string, string>();
  const take = (update: { artifact?: { artifactId: string; parts: Array<{ content?: { value?: unknown } }> }; append: boolean }) => {
    const id = update.artifact!.artifactId;
    const chunk = String(update.artifact!.parts[0]?.content?.value ?? "");
    artifacts.set(id, (update.append ? (artifacts.get(id) ?? "") : "") + chunk);
  };
  let taskId = "";
  let chunks = 0;
  for await (const event of client.sendMessageStream(send([{ $case: "text", value: "Where is order A1002?" }]))) {
    const payload = event.payload;
    if (payload?.$case === "task") taskId = payload.value.id;
    if (payload?.$case === "artifactUpdate") take(payload.value);
    // The client goes away after a few chunks of text.
    if (payload?.$case === "artifactUpdate" && ++chunks === 3) break;
  }
  assert.ok(taskId && chunks === 3, "the stream was dropped while the text came");
  const kinds: string[] = [];
  let snapshot: TaskState | undefined;
  let last: TaskState | undefined;
  for await (const event of client.resubscribeTask({ tenant: "", id: taskId })) {
    const payload = event.payload;
    if (!payload) continue;
    kinds.push(payload.$case);
    if (payload.$case === "task") snapshot = payload.value.status?.state;
    if (payload.$case === "artifactUpdate") take(payload.value);
    if (payload.$case === "statusUpdate") last = payload.value.status?.state;
  }
  assert.deepEqual([kinds[0], snapshot, last], ["task", TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  const read = await client.getTask({ tenant: "", id: taskId, historyLength: undefined });
  const answer = String(read.history.at(-1)?.parts[0]?.content?.value ?? "");
  // Nothing lost, nothing twice: the last step's artifact, as assembled across both streams, is the answer.
  assert.equal([...artifacts.values()].at(-1), answer);
});

/** A development sign-in (the Worker under `npm start` has one): the bearer header of a user's token. */
async function signIn(name: string): Promise<{ serviceParameters: Record<string, string> }> {
  const res = await fetch(`${dev.url}/v1/dev/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });
  const { token } = (await res.json()) as { token: string };
  return { serviceParameters: { authorization: `Bearer ${token}` } };
}

const list = (): ListTasksRequest => ({
  tenant: "",
  contextId: "",
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: undefined,
  pageToken: "",
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: undefined,
});

it("keeps two signed-in users apart: each lists their own tasks, and another's task is not found; a forged token is refused", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  const [ada, bob] = [await signIn("Ada A2A"), await signIn("Bob A2A")];
  const hers = await client.sendMessage(send([{ $case: "text", value: "hello" }]), ada);
  const his = await client.sendMessage(send([{ $case: "text", value: "hello there" }]), bob);
  assert.ok("status" in hers && "status" in his);
  // A second task in her context knows the first: the same conversation, held by whoever holds it.
  const again = await client.sendMessage(send([{ $case: "text", value: "thanks" }], { contextId: hers.contextId }), ada);
  assert.ok("status" in again);
  assert.equal(again.contextId, hers.contextId);
  assert.equal(again.id, `${hers.contextId}:2`);
  const listed = await client.listTasks(list(), ada);
  assert.deepEqual(
    listed.tasks.map((t) => t.id),
    [again.id],
  );
  // Ada's claims signed with another key than the Worker's: refused before JSON-RPC, with the HTTP API's 401.
  const forged = await new SignJWT({ sub: "Ada A2A", name: "Ada A2A" })
    .setProtectedHeader({ alg: "HS256" })
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode("not-the-worker-s-development-key-0123456789"));
  // The SDK turns the spec's codes into its typed errors.
  await assert.rejects(client.getTask({ tenant: "", id: hers.id, historyLength: undefined }, bob), { name: "TaskNotFoundError" });
  await assert.rejects(
    client.getTask({ tenant: "", id: hers.id, historyLength: undefined }, { serviceParameters: { authorization: `Bearer ${forged}` } }),
    /401|invalid_token|unauthorized/i,
  );
});

it("cancels through the client: a finished task is not cancelable", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  const done = await client.sendMessage(send([{ $case: "text", value: "hello" }]));
  assert.ok("status" in done);
  await assert.rejects(client.cancelTask({ tenant: "", id: done.id, metadata: undefined }), { name: "TaskNotCancelableError" });
});

it("takes a photo as a file part (raw bytes) from the official client: the demo's shipping asks which order, and the photo is the conversation's", async () => {
  const client = await new ClientFactory().createFromUrl(dev.url);
  const photo = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
  const request = send([{ $case: "text", value: "My parcel arrived damaged, here is a photo" }]);
  request.message!.parts.push({
    content: { $case: "raw", value: photo },
    metadata: undefined,
    filename: "box.png",
    mediaType: "image/png",
  });
  const sent = await client.sendMessage(request);
  assert.ok("status" in sent, `a task, not ${JSON.stringify(sent)}`);
  assert.equal(sent.status?.state, TaskState.TASK_STATE_COMPLETED);
  const said = sent.history?.findLast((m) => m.role === Role.ROLE_AGENT)?.parts[0]?.content;
  assert.deepEqual(said, { $case: "text", value: "I see your photo. Which order is it? Please give the order id, for example A1002." });
  const view = (await (await fetch(`${dev.url}/v1/conversations/${sent.contextId}`)).json()) as {
    files: Array<{ name: string; mediaType: string; size: number }>;
  };
  assert.deepEqual(
    view.files.map(({ name, mediaType, size }) => ({ name, mediaType, size })),
    [{ name: "box.png", mediaType: "image/png", size: 12 }],
  );
});
