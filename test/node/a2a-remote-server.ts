/**
 * A remote A2A agent served by the official SDK (`@a2a-js/sdk/server`: its request handler, task
 * store and JSON-RPC transport, behind node:http as its Express adapter would put them), for the
 * tests of handing a conversation to a remote agent. What it does depends on the message:
 * - "needs input" → asks "Which invoice?" and waits (INPUT_REQUIRED); the answer completes the task;
 * - "sign in" → AUTH_REQUIRED; "fail" → FAILED ("the ledger is down"); "reject" → REJECTED;
 * - "hang" → works and never ends; "hand back" → answers and sends the hand-back data part;
 * - "whoami" → says the authorization header it was sent (as a careless server might);
 * - anything else → "Billing here: …" in two chunks, COMPLETED.
 * `/garbage` answers frames that are not JSON, `/html` a web page, `/stops` a stream that ends while working.
 * Every message it is sent is kept, with its context, task and the headers it came with.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type AgentCard, type Message, Role, type Task, TaskState } from "@a2a-js/sdk";
import {
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  type RequestContext,
  ServerCallContext,
} from "@a2a-js/sdk/server";

export const HAND_BACK_EXTENSION = "urn:handoff-runtime:a2a:handoffs:v1";

export interface Received {
  text: string;
  contextId: string;
  taskId: string;
  /** The task it continued, when it answered one that asked for input. */
  continued: boolean;
  authorization: string | undefined;
}

const text = (value: string) => ({ content: { $case: "text" as const, value }, metadata: undefined, filename: "", mediaType: "" });

function agentMessage(ctx: RequestContext, parts: Message["parts"]): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: ctx.contextId,
    taskId: ctx.taskId,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

class BillingExecutor implements AgentExecutor {
  readonly received: Received[] = [];
  authorization: string | undefined;

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const said = ctx.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
    this.received.push({
      text: said,
      contextId: ctx.contextId,
      taskId: ctx.taskId,
      continued: ctx.task !== undefined,
      authorization: this.authorization,
    });
    const status = (state: TaskState, message?: Message) => ({
      kind: "statusUpdate" as const,
      data: {
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: { state, message, timestamp: new Date().toISOString() },
        metadata: undefined,
      },
    });
    const task: Task = ctx.task ?? {
      id: ctx.taskId,
      contextId: ctx.contextId,
      status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [ctx.userMessage],
      metadata: undefined,
    };
    bus.publish({ kind: "task", data: task });
    const chunk = (value: string, append: boolean) =>
      bus.publish({
        kind: "artifactUpdate",
        data: {
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: { artifactId: "answer", name: "answer", description: "", parts: [text(value)], metadata: undefined, extensions: [] },
          append,
          lastChunk: false,
          metadata: undefined,
        },
      });
    const end = (state: TaskState, message?: Message) => {
      bus.publish(status(state, message));
      bus.finished();
    };
    if (ctx.task) {
      chunk(`Invoice ${said.trim()} is paid.`, false);
      return end(TaskState.TASK_STATE_COMPLETED);
    }
    if (said.includes("needs input")) return end(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage(ctx, [text("Which invoice?")]));
    if (said.includes("sign in")) return end(TaskState.TASK_STATE_AUTH_REQUIRED);
    if (said.includes("fail")) return end(TaskState.TASK_STATE_FAILED, agentMessage(ctx, [text("the ledger is down")]));
    if (said.includes("reject")) return end(TaskState.TASK_STATE_REJECTED, agentMessage(ctx, [text("not for billing")]));
    if (said.includes("hang")) {
      bus.publish(status(TaskState.TASK_STATE_WORKING));
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      return end(TaskState.TASK_STATE_COMPLETED);
    }
    if (said.includes("whoami")) {
      chunk(`You called with ${this.authorization ?? "nothing"}.`, false);
      return end(TaskState.TASK_STATE_COMPLETED);
    }
    if (said.includes("hand back")) {
      chunk("Refund sent.", false);
      const handBack = {
        content: { $case: "data" as const, value: { [HAND_BACK_EXTENSION]: { handBack: { summary: "refunded 20 EUR" } } } },
      };
      return end(TaskState.TASK_STATE_COMPLETED, agentMessage(ctx, [{ ...text(""), ...handBack }]));
    }
    const last = said.trim().split("\n").at(-1) ?? "";
    chunk("Billing here: ", false);
    chunk(`you said "${last}".`, true);
    end(TaskState.TASK_STATE_COMPLETED);
  }

  async cancelTask(): Promise<void> {}
}

function card(base: string): AgentCard {
  return {
    name: "billing",
    description: "Billing questions.",
    version: "1",
    supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
    securitySchemes: {},
    securityRequirements: [],
    signatures: [],
  } as unknown as AgentCard;
}

async function body(req: IncomingMessage): Promise<string> {
  let data = "";
  for await (const chunk of req) data += chunk;
  return data;
}

async function serveRpc(handler: JsonRpcTransportHandler, raw: string, res: ServerResponse): Promise<void> {
  const answer = await handler.handle(raw, new ServerCallContext({ requestedVersion: "1.0" }));
  if (!(Symbol.asyncIterator in Object(answer))) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for await (const event of answer as AsyncGenerator<unknown>) res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end();
}

/** Starts the remote agent on a free loopback port. */
export async function startA2ARemote(): Promise<{ url: string; executor: BillingExecutor; close(): Promise<void> }> {
  const executor = new BillingExecutor();
  let base = "";
  const handler = () => new JsonRpcTransportHandler(new DefaultRequestHandler(card(base), new InMemoryTaskStore(), executor));
  let rpc: JsonRpcTransportHandler | undefined;
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", base).pathname;
    executor.authorization = req.headers.authorization;
    if (path === "/.well-known/agent-card.json")
      return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(card(base)));
    const raw = await body(req);
    if (path === "/garbage") return void res.writeHead(200, { "content-type": "text/event-stream" }).end("data: this is not json\n\n");
    if (path === "/html") return void res.writeHead(200, { "content-type": "text/html" }).end("<html>hello</html>");
    if (path === "/stops") {
      const working = {
        jsonrpc: "2.0",
        id: 1,
        result: { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } } },
      };
      return void res.writeHead(200, { "content-type": "text/event-stream" }).end(`data: ${JSON.stringify(working)}\n\n`);
    }
    rpc ??= handler();
    await serveRpc(rpc, raw, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    executor,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
