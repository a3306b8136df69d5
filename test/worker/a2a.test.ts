/**
 * The network as an A2A v1.0 agent, through the Worker: its card, and JSON-RPC SendMessage,
 * GetTask and CancelTask over conversations (a context is a conversation, a turn a task), with the
 * handoffs in the task's metadata, an approval as input-required resumed by the client's decisions,
 * and the spec's errors for what is wrong or not served.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { Agent, Network } from "../../src/runtime/index.ts";
import { denialMessage } from "../../src/runtime/wait/requests.ts";
import { createApp } from "../../src/http/app.ts";
import { a2a, agUi } from "../../src/cloudflare/index.ts";
import { a2aStream } from "../../src/a2a/server/a2a-stream.ts";
import { encodeSse, type StoredEvent, turnEvents } from "../../src/wire/index.ts";
import { refuseUnsafeUrl } from "../../src/a2a/server/push-methods.ts";
import { HOW_TO_DECIDE, isTerminal, parseTaskId, taskIdOf, taskOf } from "../../src/a2a/server/tasks.ts";
import type { TurnView } from "../../src/conversation/conversation-view.ts";
import type { OutMessage, Task } from "../../src/a2a/a2a-wire.ts";
import { call, chat, type ConversationJson, scenario } from "../support/worker.ts";

/** One result of a streaming answer: the task, a status update or a chunk of an artifact. */
interface StreamResult {
  task?: Task;
  statusUpdate?: { taskId: string; status: Task["status"]; metadata?: Record<string, unknown> };
  artifactUpdate?: { artifact: { parts: Array<{ text: string }> }; append: boolean };
}

/** A streaming answer's frames: each SSE `data:` line a JSON-RPC response carrying a stream response. */
function rpcFrames(text: string): Array<{ jsonrpc: string; id: string | number; result: StreamResult }> {
  return text
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => JSON.parse(frame.slice(6)) as { jsonrpc: string; id: string | number; result: StreamResult });
}

/** A JSON-RPC answer: a result (a task, or `{ task }` for SendMessage) or an error. */
interface Answer {
  result: Task & { task: Task; tasks: Task[]; nextPageToken: string };
  error: { code: number; message: string; data?: unknown };
}

const EXTENSION = "urn:handoff-runtime:a2a:handoffs:v1";
let next = 0;

async function rpc(method: string, params: unknown, version: string | null = "1.0"): Promise<Answer> {
  const res = await call("/v1/a2a", {
    method: "POST",
    headers: { "content-type": "application/json", ...(version === null ? {} : { "a2a-version": version }) },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++next, method, params }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Answer;
  expect(body).toMatchObject({ jsonrpc: "2.0", id: next });
  return body;
}

const userMessage = (text: string, more: Record<string, unknown> = {}) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...more },
});
const args = (value: unknown) => JSON.stringify(value);

describe("the agent card", () => {
  it("names the network's entry agent, a skill per agent (not the people), the JSON-RPC interface, and what is served", async () => {
    const res = await call("/.well-known/agent-card.json");
    expect(res.status).toBe(200);
    const card = (await res.json()) as { skills: Array<{ id: string }> };
    expect(card).toMatchObject({
      name: "triage",
      supportedInterfaces: [{ url: "https://chat.test/v1/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: true, pushNotifications: true, extensions: [{ uri: EXTENSION, required: false }] },
    });
    const skills = card.skills.map((skill) => skill.id);
    expect(skills).toEqual(expect.arrayContaining(["triage", "billing", "shipping"]));
    expect(skills).not.toContain("support-desk");
  });
});

describe("the agent card, whole", () => {
  const cardOf = async (vars: Record<string, string>) => {
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    const res = await app.fetch(
      new Request("https://chat.test/.well-known/agent-card.json"),
      { ...env, ...vars },
      createExecutionContext(),
    );
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown> & { skills: Array<Record<string, unknown>> };
  };

  it("describes each skill, tags the entry agent, and offers text and JSON both ways", async () => {
    const card = await cardOf({});
    expect(card).toMatchObject({
      description: "Routes the customer to the right specialist.",
      version: "1",
      defaultInputModes: ["text/plain", "application/json", "image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf"],
      defaultOutputModes: ["text/plain", "application/json"],
      securitySchemes: {},
      securityRequirements: [],
    });
    const network = createSupportNetwork();
    for (const skill of card.skills) {
      const agent = network.agents.get(skill.id as string)!;
      expect(skill).toEqual({
        id: agent.name,
        name: agent.name,
        description: agent.description || agent.name,
        tags: [agent === network.entry ? "entry" : "handoff-target"],
      });
    }
    expect(card.skills.filter((s) => (s.tags as string[]).includes("entry")).map((s) => s.id)).toEqual(["triage"]);
  });

  it("falls back to the entry agent's name, and a skill's name, for what has no description", async () => {
    const helper = new Agent({ name: "helper", instructions: "Help." });
    const network = new Network(new Agent({ name: "front", instructions: "Route.", handoffs: [helper] }), { defaultModel: "m" });
    const res = await createApp(() => network, [a2a(), agUi()]).fetch(
      new Request("https://chat.test/.well-known/agent-card.json"),
      env,
      createExecutionContext(),
    );
    const card = (await res.json()) as { description: string; skills: unknown[] };
    expect(card.description).toBe("The front agent and the agents it hands conversations to.");
    expect(card.skills).toEqual([
      { id: "front", name: "front", description: "front", tags: ["entry"] },
      { id: "helper", name: "helper", description: "helper", tags: ["handoff-target"] },
    ]);
  });

  it("names the credentials the Worker takes: its API key, a sign-in token, or both, each a requirement of its own", async () => {
    const bearer = (description: RegExp, more: object = {}) => ({
      httpAuthSecurityScheme: { scheme: "Bearer", description: expect.stringMatching(description), ...more },
    });
    const both = await cardOf({ API_KEY: "k".repeat(24), AUTH_JWT_SECRET: "s".repeat(40) });
    expect(both.securitySchemes).toEqual({ apiKey: bearer(/API_KEY/), signIn: bearer(/sign-in token/, { bearerFormat: "JWT" }) });
    expect(both.securityRequirements).toEqual([{ schemes: { apiKey: { list: [] } } }, { schemes: { signIn: { list: [] } } }]);
    const jwks = await cardOf({ AUTH_JWKS_URL: "https://idp.test/.well-known/jwks.json" });
    expect(Object.keys(jwks.securitySchemes as object)).toEqual(["signIn"]);
    const key = await cardOf({ API_KEY: "k".repeat(24) });
    expect(Object.keys(key.securitySchemes as object)).toEqual(["apiKey"]);
  });
});

describe("push URLs, at the edge of every range the SSRF check refuses", () => {
  const verdict = (url: string, allowPrivate = false) => {
    try {
      refuseUnsafeUrl(url, allowPrivate);
      return "allowed";
    } catch (error) {
      return (error as Error).message
        .replace(/^The push URL \S+ is refused: /, "")
        .replace(/ \(A2A_PUSH_ALLOW_PRIVATE=true allows it for development\)\.$/, "");
    }
  };
  const PRIVATE = "it is a loopback, private or link-local address";

  it("refuses each private range from its first address to its last, and allows the addresses either side", () => {
    const table: Array<[string, string]> = [
      ["https://0.0.0.0/", PRIVATE],
      ["https://1.0.0.1/", "allowed"],
      ["https://9.255.255.255/", "allowed"],
      ["https://10.0.0.0/", PRIVATE],
      ["https://10.255.255.255/", PRIVATE],
      ["https://11.0.0.1/", "allowed"],
      ["https://126.255.255.255/", "allowed"],
      ["https://127.0.0.1/", PRIVATE],
      ["https://128.0.0.1/", "allowed"],
      ["https://100.63.255.255/", "allowed"],
      ["https://100.64.0.0/", PRIVATE],
      ["https://100.127.255.255/", PRIVATE],
      ["https://100.128.0.0/", "allowed"],
      ["https://169.253.255.255/", "allowed"],
      ["https://169.254.0.1/", PRIVATE],
      ["https://169.255.0.1/", "allowed"],
      ["https://172.15.255.255/", "allowed"],
      ["https://172.16.0.0/", PRIVATE],
      ["https://172.31.255.255/", PRIVATE],
      ["https://172.32.0.0/", "allowed"],
      ["https://192.167.255.255/", "allowed"],
      ["https://192.168.0.0/", PRIVATE],
      ["https://192.169.0.0/", "allowed"],
      ["https://[::]/", PRIVATE],
      ["https://[::1]/", PRIVATE],
      ["https://[::2]/", "allowed"],
      ["https://[fc00::1]/", PRIVATE],
      ["https://[fdff::1]/", PRIVATE],
      ["https://[fe80::1]/", PRIVATE],
      ["https://[febf::1]/", PRIVATE],
      ["https://[fec0::1]/", "allowed"],
      ["https://[fb00::1]/", "allowed"],
      ["https://[::ffff:10.0.0.1]/", PRIVATE],
      ["https://[2606:4700::1111]/", "allowed"],
      // Public addresses whose later groups read like a private prefix.
      ["https://[2606:4700::fd]/", "allowed"],
      ["https://[2606:4700::fe80]/", "allowed"],
      ["https://localhost/", "it names a local host"],
      ["https://api.localhost/", "it names a local host"],
      ["https://printer.local/", "it names a local host"],
      ["https://db.internal/", "it names a local host"],
      ["https://localhost.example.com/", "allowed"],
      ["https://internal.example.com/", "allowed"],
      // Names are not addresses: one that begins like a private address or range is a name like any other.
      ["https://fd.example.com/", "allowed"],
      ["https://fe80.example.com/", "allowed"],
      ["https://10.0.0.1.example.com/", "allowed"],
      ["http://example.com/", "push URLs are https"],
      ["https://hooks.example.com/a2a", "allowed"],
    ];
    expect(table.map(([url]) => [url, verdict(url)])).toEqual(table);
  });

  it("with A2A_PUSH_ALLOW_PRIVATE, allows http and private addresses, and still refuses what is not http(s)", () => {
    expect(["http://127.0.0.1:8787/hook", "https://10.0.0.1/hook", "http://localhost/hook"].map((url) => verdict(url, true))).toEqual([
      "allowed",
      "allowed",
      "allowed",
    ]);
    expect(verdict("ftp://example.com/hook", true)).toBe("it is not http(s)");
  });
});

describe("a turn as a task", () => {
  const view = (more: Partial<TurnView>): TurnView => ({
    turn: 3,
    status: "completed",
    error: null,
    messages: [],
    handoffs: [],
    holder: "triage",
    pending: [],
    latest: true,
    lastEventId: 9,
    ...more,
  });

  it("names its conversation and turn, and nothing else parses as a task id", () => {
    expect(parseTaskId(taskIdOf("conv_1-A", 12))).toEqual({ conversationId: "conv_1-A", turn: 12 });
    expect(parseTaskId(`${"c".repeat(128)}:1`)).toEqual({ conversationId: "c".repeat(128), turn: 1 });
    expect(parseTaskId("c:999999999")).toEqual({ conversationId: "c", turn: 999_999_999 });
    for (const id of [`${"c".repeat(129)}:1`, "c:0", "c:01", "c:1000000000", ":1", "c:", "c", "c:1:2", "c.d:1", " c:1", "c:1 "])
      expect(parseTaskId(id), id).toBeNull();
  });

  it("is working, waiting for input, done, failed or cancelled as its turn is, and says why it waits or failed", () => {
    const cases: Array<[TurnView["status"], string]> = [
      ["running", "TASK_STATE_WORKING"],
      ["awaiting_approval", "TASK_STATE_INPUT_REQUIRED"],
      ["awaiting_input", "TASK_STATE_INPUT_REQUIRED"],
      ["completed", "TASK_STATE_COMPLETED"],
      ["failed", "TASK_STATE_FAILED"],
      ["cancelled", "TASK_STATE_CANCELED"],
      ["rewound", "TASK_STATE_CANCELED"],
    ];
    for (const [status, state] of cases) expect(taskOf("c", view({ status })).status.state, status).toBe(state);
    expect(["COMPLETED", "FAILED", "CANCELED", "WORKING", "INPUT_REQUIRED"].map((s) => isTerminal(`TASK_STATE_${s}` as never))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    const pending: TurnView["pending"] = [
      { kind: "approval", toolCallId: "k1", name: "refund", args: { amount: 5 }, agent: "billing", expiresAt: "2026-12-03T00:00:00.000Z" },
    ];
    const waiting = taskOf("c", view({ status: "awaiting_approval", pending }));
    expect(waiting.status.message).toMatchObject({
      messageId: "c:3:-1",
      role: "ROLE_AGENT",
      parts: [{ text: `Waiting for approval: refund. ${HOW_TO_DECIDE}` }, { data: { pending }, mediaType: "application/json" }],
    });
    expect(taskOf("c", view({ status: "failed", error: "model_timeout" })).status.message?.parts).toEqual([
      { text: "The turn failed: model_timeout." },
    ]);
    expect(taskOf("c", view({ status: "failed" })).status.message?.parts).toEqual([{ text: "The turn failed: unknown." }]);
    expect(taskOf("c", view({})).status.message).toBeUndefined();
  });

  it("keeps a person's turn working until the person answers or hands back", () => {
    const toPerson = {
      kind: "transfer",
      from: "triage",
      to: "desk",
      reason: "r",
      stepIndex: 0,
      toolCallId: "t",
    } as TurnView["handoffs"][number];
    const handed = view({ status: "awaiting_human", handoffs: [toPerson], messages: [{ role: "user", content: "help" }] });
    expect(taskOf("c", handed).status.state).toBe("TASK_STATE_WORKING");
    const answered = { ...handed, messages: [...handed.messages, { role: "assistant" as const, agent: "desk", content: "Here." }] };
    expect(taskOf("c", answered).status.state).toBe("TASK_STATE_COMPLETED");
    const otherSpoke = { ...handed, messages: [...handed.messages, { role: "assistant" as const, agent: "triage", content: "Wait." }] };
    expect(taskOf("c", otherSpoke).status.state).toBe("TASK_STATE_WORKING");
    const back = {
      ...handed,
      handoffs: [toPerson, { kind: "hand-back", from: "desk", to: "triage", note: "n" } as TurnView["handoffs"][number]],
    };
    expect(taskOf("c", back).status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("holds the user's and the agents' words, the last historyLength of them when asked, and who holds it in its metadata", () => {
    const messages: TurnView["messages"] = [
      { role: "user", content: "one" },
      { role: "assistant", agent: "triage", content: "" },
      { role: "assistant", agent: "billing", content: "two" },
      { role: "user", content: "three" },
    ];
    const task = taskOf("c", view({ messages, holder: "billing" }));
    expect(task).toMatchObject({ id: "c:3", contextId: "c", metadata: { [EXTENSION]: { holder: "billing", handoffs: [] } } });
    expect(task.history).toEqual([
      { messageId: "c:3:0", contextId: "c", taskId: "c:3", role: "ROLE_USER", parts: [{ text: "one" }] },
      { messageId: "c:3:2", contextId: "c", taskId: "c:3", role: "ROLE_AGENT", parts: [{ text: "two" }], metadata: { agent: "billing" } },
      { messageId: "c:3:3", contextId: "c", taskId: "c:3", role: "ROLE_USER", parts: [{ text: "three" }] },
    ]);
    expect(taskOf("c", view({ messages }), 2).history.map((m) => m.messageId)).toEqual(["c:3:2", "c:3:3"]);
    expect(taskOf("c", view({ messages }), 0).history).toEqual([]);
    expect(taskOf("c", view({ messages }), 10).history).toHaveLength(3);
  });
});

describe("the A2A stream of a turn", () => {
  /** A turn's SSE stream of these events, as the conversation sends it. */
  const turnOf = (events: StoredEvent[]) => new Response(events.map(encodeSse).join("")).body as ReadableStream<Uint8Array>;
  const resultsOf = async (stream: ReadableStream<Uint8Array>) => rpcFrames(await new Response(stream).text());
  const at = expect.any(String);
  const user: OutMessage = { messageId: "c1:1:0", contextId: "c1", taskId: "c1:1", role: "ROLE_USER", parts: [{ text: "hi" }] };

  it("answers each event as its stream response: the task as it opened, text chunks per step, each step's message, the handoff, a person's answer", async () => {
    const agentSaid: OutMessage = { ...user, messageId: "c1:1:1", role: "ROLE_AGENT", parts: [{ text: "Hello." }] };
    // Read once the turn began, the task is already further on (a fast turn): the stream opens it working, with the user's words only.
    const later: Task = {
      id: "c1:1",
      contextId: "c1",
      status: { state: "TASK_STATE_COMPLETED", timestamp: "t0" },
      history: [user, agentSaid],
      metadata: {},
    };
    const final: Task = { ...later, status: { state: "TASK_STATE_WORKING", timestamp: "t1" }, metadata: { holder: "desk" } };
    const reads: Task[] = [later, final];
    const transfer = { kind: "transfer" as const, from: "triage", to: "desk", toolCallId: "t", stepIndex: 0 };
    const turn = turnOf([
      { id: 1, type: "step-start", stepIndex: 0, agent: "triage" },
      { id: 2, type: "text-delta", delta: "Hel" },
      { id: 3, type: "text-delta", delta: "lo." },
      { id: 4, type: "step-finish", stepIndex: 0, finishReason: "tool_calls" },
      { id: 5, type: "handoff", ...transfer },
      { id: 6, type: "step-start", stepIndex: 1, agent: "desk" },
      { id: 7, type: "step-finish", stepIndex: 1, finishReason: "stop" },
      { id: 8, type: "operator-message", agent: "desk", text: "A person here." },
      { id: 9, type: "text-delta", delta: "never sent: the person's answer ended the task" },
    ]);
    const results = await resultsOf(a2aStream(7, turnEvents(turn), async () => reads.shift()!));
    expect(results.every((r) => r.jsonrpc === "2.0" && r.id === 7)).toBe(true);
    const ids = { taskId: "c1:1", contextId: "c1" };
    const chunk = (text: string, append: boolean) => ({
      artifactUpdate: { ...ids, artifact: { artifactId: "c1:1:step-0", name: "step 0", parts: [{ text }] }, append, lastChunk: false },
    });
    expect(results.map((r) => r.result)).toEqual([
      { task: { ...later, status: { state: "TASK_STATE_WORKING", timestamp: "t0" }, history: [user] } },
      chunk("Hel", false),
      chunk("lo.", true),
      {
        statusUpdate: {
          ...ids,
          status: {
            state: "TASK_STATE_WORKING",
            message: { messageId: "c1:1:step-0", ...ids, role: "ROLE_AGENT", parts: [{ text: "Hello." }], metadata: { agent: "triage" } },
            timestamp: at,
          },
        },
      },
      {
        statusUpdate: {
          ...ids,
          status: { state: "TASK_STATE_WORKING", timestamp: at },
          metadata: { [EXTENSION]: { holder: "desk", handoff: { type: "handoff", ...transfer } } },
        },
      },
      {
        statusUpdate: {
          ...ids,
          status: {
            state: "TASK_STATE_WORKING",
            message: {
              messageId: expect.stringMatching(/^c1:1:person-\d+$/),
              ...ids,
              role: "ROLE_AGENT",
              parts: [{ text: "A person here." }],
              metadata: { agent: "desk", person: true },
            },
            timestamp: at,
          },
        },
      },
      { statusUpdate: { ...ids, status: { state: "TASK_STATE_WORKING", timestamp: "t1" }, metadata: { holder: "desk" } } },
    ]);
  });

  it("of a turn with no events is its task as it ended; one broken before any names no task", async () => {
    const ended: Task = {
      id: "c1:1",
      contextId: "c1",
      status: { state: "TASK_STATE_COMPLETED", timestamp: "t" },
      history: [user],
      metadata: {},
    };
    expect((await resultsOf(a2aStream(1, turnEvents(turnOf([])), async () => ended))).map((r) => r.result)).toEqual([{ task: ended }]);
    const broken = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(new Error("the object went away")) });
    expect((await resultsOf(a2aStream(1, turnEvents(broken), async () => ended))).map((r) => r.result)).toEqual([
      {
        statusUpdate: {
          taskId: "",
          contextId: "",
          status: { state: "TASK_STATE_FAILED", timestamp: at },
          metadata: { reason: "Error: the object went away" },
        },
      },
    ]);
  });

  it("ends with a failed status naming its task when the conversation's stream breaks off mid-turn", async () => {
    const task = { id: "c1:1", contextId: "c1", status: { state: "TASK_STATE_WORKING", timestamp: "" }, history: [], metadata: {} } as Task;
    let pulls = 0;
    // One token, then the stream fails, as the Durable Object's would if it went away.
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0)
          controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify({ type: "text-delta", delta: "Hel" })}\n\n`));
        else controller.error(new Error("the object went away"));
      },
    });
    const results = (await resultsOf(a2aStream(3, turnEvents(broken), async () => task))).map((r) => r.result);
    expect(Object.keys(results[0]!)).toEqual(["task"]);
    expect(results[1]!.artifactUpdate!.artifact.parts[0]!.text).toBe("Hel");
    expect(results.at(-1)!.statusUpdate).toMatchObject({ taskId: "c1:1", status: { state: "TASK_STATE_FAILED" } });
  });
});

describe("A2A=off", () => {
  it("serves neither the card nor the interface: both are 404", async () => {
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    const off = { ...env, A2A: "off" };
    const card = await app.fetch(new Request("https://chat.test/.well-known/agent-card.json"), off, createExecutionContext());
    expect([card.status, ((await card.json()) as { error: { code: string } }).error.code]).toEqual([404, "not_found"]);
    const rpc = await app.fetch(
      new Request("https://chat.test/v1/a2a", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }),
      off,
      createExecutionContext(),
    );
    expect(rpc.status).toBe(404);
  });
});

describe("JSON-RPC", () => {
  it("SendMessage takes file parts (raw bytes, or a data URL): the provider gets the image; a URL elsewhere is refused", async () => {
    const s = await scenario([{ text: "A dented box." }]);
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 7, 7, 7]);
    const raw = btoa(String.fromCharCode(...png));
    const sent = await rpc("SendMessage", {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        parts: [{ text: s.tag("the parcel") }, { raw, mediaType: "image/png", filename: "box.png" }],
      },
    });
    expect(sent.result.task.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    const { requests } = await s.sent();
    const user = requests[0]!.messages.find((m) => m.role === "user") as unknown as { content: unknown[] };
    expect(user.content).toEqual([
      { type: "text", text: s.tag("the parcel") },
      { type: "image_url", image_url: { url: `data:image/png;base64,${raw}` } },
    ]);
    const view = (await (await call(`/v1/conversations/${sent.result.task.contextId}`)).json()) as { files: Array<{ name: string }> };
    expect(view.files).toMatchObject([{ name: "box.png", mediaType: "image/png" }]);
    const elsewhere = await rpc("SendMessage", {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        parts: [{ url: "https://example.com/box.png", mediaType: "image/png" }],
      },
    });
    expect(elsewhere.error).toMatchObject({ code: -32602, message: expect.stringContaining("send the file's bytes as `raw`") });
    const html = await rpc("SendMessage", {
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ raw: btoa("<html></html>"), mediaType: "image/png" }] },
    });
    expect(html.error).toMatchObject({ data: { code: "unsupported_media_type" } });
  });

  it("SendMessage runs a turn in a new context and answers its task: history, the holder and the handoff; the next is a new task", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: args({ reason: "a charge" }) }] },
      { text: "Billing here: I see the double charge." },
      { text: "It will be refunded." },
      { text: "Noted." },
    ]);
    const first = await rpc("SendMessage", userMessage(s.tag("I was charged twice")));
    const task = first.result.task;
    expect(task).toMatchObject({
      id: `${task.contextId}:1`,
      status: { state: "TASK_STATE_COMPLETED" },
      history: [
        { role: "ROLE_USER", parts: [{ text: s.tag("I was charged twice") }] },
        { role: "ROLE_AGENT", parts: [{ text: "Billing here: I see the double charge." }], metadata: { agent: "billing" } },
      ],
      metadata: { [EXTENSION]: { holder: "billing", handoffs: [{ kind: "transfer", from: "triage", to: "billing" }] } },
    });
    // The context is the conversation, stored as any other.
    const view = (await (await call(`/v1/conversations/${task.contextId}`)).json()) as ConversationJson;
    expect(view.activeAgent).toBe("billing");
    const second = await rpc("SendMessage", userMessage(s.tag("thanks"), { contextId: task.contextId }));
    expect(second.result.task).toMatchObject({
      id: `${task.contextId}:2`,
      status: { state: "TASK_STATE_COMPLETED" },
      metadata: { [EXTENSION]: { holder: "billing", handoffs: [] } },
    });
    expect((await rpc("GetTask", { id: task.id, historyLength: 1 })).result.history).toMatchObject([{ role: "ROLE_AGENT" }]);
    // ListTasks of the context: its tasks newest first, paged; by state.
    const listed = (await rpc("ListTasks", { contextId: task.contextId, pageSize: 1 })).result as unknown as {
      tasks: Task[];
      nextPageToken: string;
      totalSize: number;
    };
    expect(listed.tasks.map((t) => t.id)).toEqual([`${task.contextId}:2`]);
    // The size of the whole list, not of the page.
    expect(listed.totalSize).toBe(2);
    // A state is found before the page is cut: one completed task a page, two in all.
    type Page = { tasks: Task[]; nextPageToken: string; totalSize: number };
    const completed = (await rpc("ListTasks", { contextId: task.contextId, status: "TASK_STATE_COMPLETED", pageSize: 1 }))
      .result as unknown as Page;
    expect([completed.tasks.map((t) => t.id), completed.totalSize]).toEqual([[`${task.contextId}:2`], 2]);
    const older = (
      await rpc("ListTasks", { contextId: task.contextId, status: "TASK_STATE_COMPLETED", pageSize: 1, pageToken: completed.nextPageToken })
    ).result as unknown as Page;
    expect([older.tasks.map((t) => t.id), older.nextPageToken]).toEqual([[task.id], ""]);
    const rest = (await rpc("ListTasks", { contextId: task.contextId, pageToken: listed.nextPageToken })).result as unknown as {
      tasks: Task[];
    };
    expect(rest.tasks.map((t) => [t.id, t.history.length])).toEqual([[task.id, 0]]);
    const done = (await rpc("ListTasks", { contextId: task.contextId, status: "TASK_STATE_WORKING" })).result as unknown as {
      tasks: Task[];
      totalSize: number;
    };
    expect([done.tasks, done.totalSize]).toEqual([[], 0]);
    // The proto's defaults and bounds: 50 a page, 1 to 100; a state A2A names; a time in ISO 8601.
    const ctx = { contextId: task.contextId };
    expect((await rpc("ListTasks", ctx)).result).toMatchObject({ pageSize: 50, totalSize: 2 });
    expect((await rpc("ListTasks", { ...ctx, status: "TASK_STATE_UNSPECIFIED" })).result).toMatchObject({ totalSize: 2 });
    for (const bad of [
      { pageSize: 0 },
      { pageSize: 101 },
      { pageSize: -1 },
      { historyLength: -5 },
      { status: "running" },
      { statusTimestampAfter: "yesterday" },
    ])
      expect((await rpc("ListTasks", { ...ctx, ...bad })).error, JSON.stringify(bad)).toMatchObject({ code: -32602 });
    expect((await rpc("ListTasks", { ...ctx, pageToken: "not-a-token" })).error.code).toBe(-32602);
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await rpc("ListTasks", { ...ctx, statusTimestampAfter: later })).result).toMatchObject({ tasks: [], totalSize: 0 });
    const earlier = new Date(Date.now() - 600_000).toISOString();
    expect((await rpc("ListTasks", { ...ctx, statusTimestampAfter: earlier, includeArtifacts: true })).result).toMatchObject({
      totalSize: 2,
    });
    // A secret the user typed is redacted in the task, as everywhere (this project's provider key).
    const secret = await rpc(
      "SendMessage",
      userMessage(s.tag("my key is AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"), { contextId: task.contextId }),
    );
    expect(JSON.stringify(secret)).not.toContain("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY");
    expect(secret.result.task.history[0]!.parts[0]).toEqual({ text: expect.stringContaining("[redacted]") });
  });

  it("a call waiting for approval is input-required with the pending calls; the client's decisions resume the same task", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) }] },
      { text: "Refunded 10 USD." },
    ]);
    const waiting = (await rpc("SendMessage", userMessage(s.tag("refund 10 USD on A1001")))).result.task;
    expect(waiting.status).toMatchObject({
      state: "TASK_STATE_INPUT_REQUIRED",
      message: {
        role: "ROLE_AGENT",
        parts: [{ text: expect.stringMatching(/refund/) }, { data: { pending: [{ toolCallId: "rf", name: "refund" }] } }],
      },
    });
    expect((await rpc("GetTask", { id: waiting.id })).result.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const cancel = await rpc("CancelTask", { id: waiting.id });
    expect(cancel.error).toMatchObject({
      code: -32002,
      message: "The task waits for approval: deny its calls with a message to it instead.",
    });
    const decided = await rpc("SendMessage", {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        taskId: waiting.id,
        contextId: waiting.contextId,
        parts: [{ data: { decisions: [{ toolCallId: "rf", approved: true }] } }],
      },
    });
    expect(decided.result.task).toMatchObject({ id: waiting.id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(decided.result.task.history.at(-1)).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "Refunded 10 USD." }] });
    // A finished task takes no new message, and cannot be cancelled.
    const again = await rpc("SendMessage", userMessage("approve", { taskId: waiting.id }));
    expect(again.error).toMatchObject({ code: -32004, message: expect.stringMatching(/COMPLETED/) });
    expect((await rpc("CancelTask", { id: waiting.id })).error).toMatchObject({
      code: -32002,
      message: "The task is TASK_STATE_COMPLETED: it cannot be cancelled.",
    });
  });

  it("takes the words approve or deny for every call a task waits on, and refuses anything else with how to decide", async () => {
    const waitFor = async (s: Awaited<ReturnType<typeof scenario>>) => {
      const waiting = (await rpc("SendMessage", userMessage(s.tag("refund 10 USD on A1001")))).result.task;
      expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
      return waiting;
    };
    const refundScript = (answer: string) => [
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) }] },
      { text: answer },
    ];
    const approved = await scenario(refundScript("Refunded 10 USD."));
    const first = await waitFor(approved);
    const unclear = await rpc("SendMessage", userMessage("yes please", { taskId: first.id }));
    expect(unclear.error).toMatchObject({ code: -32602, message: HOW_TO_DECIDE });
    expect((await rpc("GetTask", { id: first.id })).result.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const yes = await rpc("SendMessage", userMessage("  Approve ", { taskId: first.id, contextId: first.contextId }));
    expect(yes.result.task).toMatchObject({ id: first.id, status: { state: "TASK_STATE_COMPLETED" } });
    const { requests: afterYes } = await approved.sent();
    expect(afterYes.at(-1)!.messages.at(-1)).toMatchObject({ role: "tool", content: expect.stringContaining("refund") });
    expect(afterYes.at(-1)!.messages.at(-1)!.content).not.toBe(denialMessage({ toolCallId: "rf", approved: false }));

    const denied = await scenario(refundScript("No refund, then."));
    const second = await waitFor(denied);
    const no = await rpc("SendMessage", userMessage("deny", { taskId: second.id }));
    expect(no.result.task).toMatchObject({ id: second.id, status: { state: "TASK_STATE_COMPLETED" } });
    const { requests: afterNo } = await denied.sent();
    expect(afterNo.at(-1)!.messages.at(-1)).toMatchObject({ role: "tool", content: denialMessage({ toolCallId: "rf", approved: false }) });
  });

  it("refuses a message not from the user, one with no text, and one whose contextId is not its task's", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) }] },
    ]);
    const fromAgent = await rpc("SendMessage", { message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "hi" }] } });
    expect(fromAgent.error).toMatchObject({ code: -32602, message: "Send the user's message: role ROLE_USER." });
    const noText = await rpc("SendMessage", { message: { messageId: "m2", role: "ROLE_USER", parts: [{ data: { a: 1 } }] } });
    expect(noText.error).toMatchObject({ code: -32602, message: expect.stringMatching(/carries text/) });
    const waiting = (await rpc("SendMessage", userMessage(s.tag("refund 10 USD on A1001")))).result.task;
    const elsewhere = await rpc("SendMessage", userMessage("approve", { taskId: waiting.id, contextId: "another-context" }));
    expect(elsewhere.error).toMatchObject({ code: -32602, message: "The message's contextId is not its task's." });
    expect((await rpc("GetTask", { id: waiting.id })).result.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  });

  it("CancelTask stops a running task, and answers the cancelled task when asked again", async () => {
    const s = await scenario([{ text: "This answer never finishes.", holdAfter: 1 }]);
    const started = (await rpc("SendMessage", { ...userMessage(s.tag("take a while")), configuration: { returnImmediately: true } })).result
      .task;
    expect(started.status.state).toBe("TASK_STATE_WORKING");
    const cancelled = await rpc("CancelTask", { id: started.id });
    expect(cancelled.result).toMatchObject({ id: started.id, status: { state: "TASK_STATE_CANCELED" } });
    const again = await rpc("CancelTask", { id: started.id });
    expect(again.result).toMatchObject({ id: started.id, status: { state: "TASK_STATE_CANCELED" } });
    await s.release();
  });

  it("refuses a push URL a Worker should not call: not https, loopback, private, link-local or a local name (SSRF)", async () => {
    const s = await scenario([{ text: "Hello." }]);
    const { task } = (await rpc("SendMessage", userMessage(s.tag("hello")))).result;
    for (const url of [
      "http://example.com/hook",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://172.20.0.1/hook",
      "https://192.168.1.1/hook",
      "https://169.254.169.254/latest",
      "https://[::1]/hook",
      "https://[fd00::1]/hook",
      "https://localhost/hook",
      "https://printer.local/hook",
      "ftp://example.com/hook",
    ]) {
      const refused = await rpc("CreateTaskPushNotificationConfig", { taskId: task.id, url });
      expect(refused.error, url).toMatchObject({ code: -32602, message: expect.stringContaining("refused") });
    }
    const kept = await rpc("CreateTaskPushNotificationConfig", { taskId: task.id, url: "https://hooks.example.com/a2a", id: "mine" });
    expect(kept.result).toMatchObject({ taskId: task.id, id: "mine", url: "https://hooks.example.com/a2a" });
    expect((await rpc("ListTaskPushNotificationConfigs", { taskId: task.id })).result).toMatchObject({ configs: [{ id: "mine" }] });
    // Another conversation's task, or one that does not exist: task not found.
    expect(
      (await rpc("CreateTaskPushNotificationConfig", { taskId: `${task.contextId}:9`, url: "https://hooks.example.com/a2a" })).error.code,
    ).toBe(-32001);
  });

  it("push configs: made with an id of their own, listed by id without their credentials, and each refusal says what to fix", async () => {
    const s = await scenario([
      { text: "Hello." },
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) }] },
      { text: "Not refunded, then." },
      { text: "Sure." },
    ]);
    const task = (await rpc("SendMessage", userMessage(s.tag("hello")))).result.task;
    const url = "https://hooks.example.com/a2a";
    const unnamed = (await rpc("CreateTaskPushNotificationConfig", { taskId: task.id, url })).result as unknown as Record<string, unknown>;
    expect(unnamed).toEqual({ taskId: task.id, id: expect.stringMatching(/^[0-9a-f-]{36}$/), url });
    const secret = { scheme: "Basic", credentials: "dXNlcjpwdw==" };
    await rpc("CreateTaskPushNotificationConfig", { taskId: task.id, url, id: "zz-last", token: "tk", authentication: secret });
    const listed = (await rpc("ListTaskPushNotificationConfigs", { taskId: task.id })).result as unknown as {
      configs: Array<Record<string, unknown>>;
    };
    expect(listed.configs.map((config) => config.id)).toEqual([unnamed.id, "zz-last"]);
    expect(listed.configs[1]).toEqual({
      taskId: task.id,
      id: "zz-last",
      url,
      token: "tk",
      authentication: { scheme: "Basic", credentials: "" },
    });
    const refusals: Array<[string, Record<string, unknown>, number, string]> = [
      ["CreateTaskPushNotificationConfig", { url }, -32602, "Name the task: `taskId`."],
      ["CreateTaskPushNotificationConfig", { taskId: "", url }, -32602, "Name the task: `taskId`."],
      ["CreateTaskPushNotificationConfig", { taskId: task.id }, -32602, "`url` is where updates are pushed: an https URL."],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: task.id, url: "not a url" },
        -32602,
        "`url` is where updates are pushed: an https URL.",
      ],
      ["GetTaskPushNotificationConfig", { taskId: task.id }, -32602, "Name the config: `id`."],
      ["GetTaskPushNotificationConfig", { taskId: task.id, id: "nope" }, -32602, `Task ${task.id} has no push notification config 'nope'.`],
      [
        "DeleteTaskPushNotificationConfig",
        { taskId: task.id, id: "nope" },
        -32602,
        `Task ${task.id} has no push notification config 'nope'.`,
      ],
      ["GetTaskPushNotificationConfig", { taskId: "garbage", id: "zz-last" }, -32001, "No such task."],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: task.id, url: "http://hooks.example.com/a2a" },
        -32602,
        "The push URL http://hooks.example.com/a2a is refused: push URLs are https (A2A_PUSH_ALLOW_PRIVATE=true allows it for development).",
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: task.id, url: "https://build.internal/hook" },
        -32602,
        "The push URL https://build.internal/hook is refused: it names a local host (A2A_PUSH_ALLOW_PRIVATE=true allows it for development).",
      ],
      [
        "CreateTaskPushNotificationConfig",
        { taskId: task.id, url: "https://10.0.0.1/hook" },
        -32602,
        "The push URL https://10.0.0.1/hook is refused: it is a loopback, private or link-local address (A2A_PUSH_ALLOW_PRIVATE=true allows it for development).",
      ],
    ];
    for (const [method, params, code, message] of refusals)
      expect((await rpc(method, params)).error, `${method} ${JSON.stringify(params)}`).toEqual({
        code,
        message: expect.stringContaining(message),
      });
    // A message its conversation refuses (approvals wait) leaves no config behind for the turn it did not start.
    const waiting = (await rpc("SendMessage", userMessage("refund 10 USD on A1001", { contextId: task.contextId }))).result.task;
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const refused = await rpc("SendMessage", {
      ...userMessage("and another thing", { contextId: task.contextId }),
      configuration: { taskPushNotificationConfig: { url, id: "ahead" } },
    });
    expect(refused.error).toMatchObject({ code: -32600, data: { code: "request_pending" } });
    // Nor does a file that is not base64: it is refused before the config is set.
    const badFile = await rpc("SendMessage", {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        contextId: task.contextId,
        parts: [{ raw: "@@@", mediaType: "image/png" }],
      },
      configuration: { taskPushNotificationConfig: { url, id: "bad-file" } },
    });
    expect(badFile.error).toMatchObject({ data: { code: "invalid_file" } });
    await rpc("SendMessage", userMessage("deny", { taskId: waiting.id }));
    const after = (await rpc("SendMessage", userMessage("one more", { contextId: task.contextId }))).result.task;
    expect(after.id).toBe(`${task.contextId}:${Number(waiting.id.split(":").at(-1)) + 1}`);
    expect((await rpc("ListTaskPushNotificationConfigs", { taskId: after.id })).result).toEqual({ configs: [], nextPageToken: "" });
  });

  it("SendStreamingMessage: the task first, the text as artifact chunks as it comes, each step's message, the handoff, the final status", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t1", name: "transfer_to_shipping", arguments: args({ reason: "a parcel" }) }] },
      { text: "Your parcel left the depot this morning.", chunkChars: 5 },
    ]);
    const res = await call("/v1/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "s1", method: "SendStreamingMessage", params: userMessage(s.tag("where is my parcel")) }),
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const results = rpcFrames(await res.text());
    expect(results.every((r) => r.jsonrpc === "2.0" && r.id === "s1")).toBe(true);
    const kinds = results.map((r) => Object.keys(r.result)[0]);
    expect(kinds[0]).toBe("task");
    const task = results[0]!.result.task!;
    // The task as it opens, however far the turn has run by then: working, with the user's message only.
    expect(task.status.state).toBe("TASK_STATE_WORKING");
    expect(task.history.map((m) => m.role)).toEqual(["ROLE_USER"]);
    const handoff = results.find((r) => r.result.statusUpdate?.metadata?.[EXTENSION]);
    expect(handoff!.result.statusUpdate!.metadata![EXTENSION]).toMatchObject({
      holder: "shipping",
      handoff: { from: "triage", to: "shipping" },
    });
    const chunks = results.filter((r) => r.result.artifactUpdate).map((r) => r.result.artifactUpdate);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((u) => u!.artifact.parts[0]!.text).join("")).toBe("Your parcel left the depot this morning.");
    expect(chunks.map((u) => u!.append)).toEqual([false, ...chunks.slice(1).map(() => true)]);
    const spoken = results.find((r) => r.result.statusUpdate?.status?.message);
    expect(spoken!.result.statusUpdate!.status.message).toMatchObject({
      role: "ROLE_AGENT",
      parts: [{ text: "Your parcel left the depot this morning." }],
      metadata: { agent: "shipping" },
    });
    expect(results.at(-1)!.result.statusUpdate).toMatchObject({ taskId: task.id, status: { state: "TASK_STATE_COMPLETED" } });
    // The order: the task, the handoff, the text, the message, the end.
    expect(kinds.at(-1)).toBe("statusUpdate");
    expect(results.indexOf(handoff!)).toBeLessThan(results.findIndex((r) => r.result.artifactUpdate));
  });

  it("SendMessage with returnImmediately answers the task working as soon as its turn has begun; the turn goes on to its end", async () => {
    const s = await scenario([{ text: "Done in the end.", holdAfter: 1 }]);
    const started = await rpc("SendMessage", { ...userMessage(s.tag("take a while")), configuration: { returnImmediately: true } });
    expect(started.result.task.status.state).toBe("TASK_STATE_WORKING");
    await s.release();
    for (let i = 0; i < 100 && (await rpc("GetTask", { id: started.result.task.id })).result.status.state === "TASK_STATE_WORKING"; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const done = (await rpc("GetTask", { id: started.result.task.id })).result;
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.history.at(-1)).toMatchObject({ parts: [{ text: "Done in the end." }] });
  });

  it("SubscribeToTask: a running task's snapshot at once, then the rest of its turn from the event log; a finished one has nothing to follow", async () => {
    const s = await scenario([{ text: "A slow answer, word by word.", holdAfter: 2 }]);
    const conversationId = `a2a-sub-${s.id}`;
    const sent = await call(`/v1/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: s.tag("take your time") }),
    });
    const reader = sent.body!.getReader();
    await reader.read();
    const res = await call("/v1/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "SubscribeToTask", params: { id: `${conversationId}:1` } }),
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const body = res.body!.getReader();
    const first = new TextDecoder().decode((await body.read()).value);
    expect(JSON.parse(first.slice(6, first.indexOf("\n\n")))).toMatchObject({
      id: 7,
      result: { task: { status: { state: "TASK_STATE_WORKING" } } },
    });
    await s.release();
    let rest = "";
    for (let chunk = await body.read(); !chunk.done; chunk = await body.read()) rest += new TextDecoder().decode(chunk.value);
    void reader.cancel();
    const results = rpcFrames(rest).map((r) => r.result);
    const text = results.flatMap((r) => (r.artifactUpdate ? [r.artifactUpdate.artifact.parts[0]!.text] : [])).join("");
    // The snapshot holds what is stored (no partial text); the stream carries the turn's text from the event log: all of it, once.
    expect(text).toBe("A slow answer, word by word.");
    expect(results.at(-1)!.statusUpdate).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" } });
    expect((await rpc("SubscribeToTask", { id: `${conversationId}:1` })).error).toMatchObject({ code: -32004 });
  });

  it("GetTask of an earlier turn, while a later one runs: that turn's end and who held the conversation after it", async () => {
    const s = await scenario([
      { text: "Triage here." },
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "an invoice" }) }] },
      { text: "Billing here." },
      { text: "Still billing, word by word.", holdAfter: 1 },
    ]);
    const conversationId = `a2a-earlier-${s.id}`;
    await chat(conversationId, s.tag("hi"));
    await chat(conversationId, "my invoice");
    const sent = await call(`/v1/conversations/${conversationId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "and another thing" }),
    });
    const reader = sent.body!.getReader();
    await reader.read();
    const task = async (turn: number) => (await rpc("GetTask", { id: `${conversationId}:${turn}` })).result;
    // Turn 1 had no handoff: the entry agent held the conversation after it; turn 2 ended with billing.
    expect(await task(1)).toMatchObject({
      status: { state: "TASK_STATE_COMPLETED" },
      metadata: { [EXTENSION]: { holder: "triage", handoffs: [] } },
    });
    expect(await task(2)).toMatchObject({
      status: { state: "TASK_STATE_COMPLETED" },
      metadata: { [EXTENSION]: { holder: "billing", handoffs: [{ kind: "transfer", from: "triage", to: "billing" }] } },
    });
    expect(await task(3)).toMatchObject({ status: { state: "TASK_STATE_WORKING" }, metadata: { [EXTENSION]: { holder: "billing" } } });
    await s.release();
    while (!(await reader.read()).done);
  });

  it("a conversation handed to a person: the task is working until the person answers, whose answer a subscriber receives", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p1", name: "transfer_to_support_desk", arguments: args({ reason: "wants a person" }) }] },
    ]);
    const handed = (await rpc("SendMessage", userMessage(s.tag("I want to talk to a person")))).result.task;
    expect(handed).toMatchObject({ status: { state: "TASK_STATE_WORKING" }, metadata: { [EXTENSION]: { holder: "support-desk" } } });
    const res = await call("/v1/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "SubscribeToTask", params: { id: handed.id } }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    const answered = await call(`/v1/conversations/${handed.contextId}/operator/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "Hello, Sam from the desk here." }),
    });
    expect(answered.status).toBe(200);
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    const results = rpcFrames(rest).map((r) => r.result);
    expect(results.map((r) => r.statusUpdate?.status)).toMatchObject([
      {
        state: "TASK_STATE_WORKING",
        message: { role: "ROLE_AGENT", parts: [{ text: "Hello, Sam from the desk here." }], metadata: { agent: "support-desk" } },
      },
      { state: "TASK_STATE_COMPLETED" },
    ]);
    const read = (await rpc("GetTask", { id: handed.id })).result;
    expect(read.status.state).toBe("TASK_STATE_COMPLETED");
    expect(read.history.at(-1)).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "Hello, Sam from the desk here." }] });
  });

  it("answers the spec's errors: version, unknown task, bad params, parse error, methods not served or unknown", async () => {
    // An absent or blank version is 0.3, which is not served.
    for (const version of [null, "", "  "])
      expect((await rpc("GetTask", { id: "x:1" }, version)).error).toMatchObject({
        code: -32009,
        message: "A2A 0.3 is not served: send A2A-Version: 1.0.",
        data: { supportedVersions: ["1.0"] },
      });
    expect((await rpc("GetTask", { id: "x:1" }, "0.3")).error.code).toBe(-32009);
    expect((await rpc("GetTask", { id: "no-such-conversation:1" })).error).toMatchObject({ code: -32001, message: "No such task." });
    expect((await rpc("GetTask", { id: "not a task id" })).error).toMatchObject({ code: -32001, message: "No such task." });
    // A conversation that is there, a turn it has not had.
    const s = await scenario([{ text: "One turn." }]);
    await chat(s.conversationId, s.tag("hi"));
    expect((await rpc("GetTask", { id: `${s.conversationId}:1` })).result).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" } });
    expect((await rpc("GetTask", { id: `${s.conversationId}:2` })).error).toMatchObject({ code: -32001, message: "No such task." });
    expect((await rpc("GetTask", {})).error).toMatchObject({ code: -32602, message: expect.stringMatching(/id/) });
    expect((await rpc("SendMessage", { message: { messageId: "m", role: "ROLE_USER", parts: [] } })).error.code).toBe(-32602);
    expect((await rpc("ListTasks", {})).error).toMatchObject({
      code: -32602,
      message: "Name the context (contextId): only a signed-in user has a list of their own.",
    });
    const served = /^this agent answers SendMessage, SendStreamingMessage, .*GetTask, .*CancelTask/;
    const notYet = (await rpc("GetExtendedAgentCard", {})).error;
    expect(notYet).toMatchObject({ code: -32004, message: expect.stringMatching(/^GetExtendedAgentCard is not served yet: /) });
    expect(notYet.message.replace("GetExtendedAgentCard is not served yet: ", "")).toMatch(served);
    expect((await rpc("DeleteTaskPushNotificationConfig", { taskId: "x:1", id: "c" })).error.code).toBe(-32001);
    const unknown = (await rpc("Nonsense", {})).error;
    expect(unknown).toMatchObject({ code: -32601, message: expect.stringMatching(/^No method Nonsense: /) });
    expect(unknown.message.replace("No method Nonsense: ", "")).toMatch(served);
    const res = await call("/v1/a2a", { method: "POST", headers: { "content-type": "application/json", "a2a-version": "1.0" }, body: "{" });
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "The body is not JSON." } });
    // Not JSON-RPC 2.0, or no method: an invalid request.
    for (const body of [
      { jsonrpc: "1.0", id: 1, method: "GetTask", params: {} },
      { jsonrpc: "2.0", id: 2, params: {} },
    ]) {
      const invalid = await call("/v1/a2a", {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify(body),
      });
      expect(await invalid.json(), JSON.stringify(body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    }
  });
});
