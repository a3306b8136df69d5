/**
 * The network as an A2A v1.0 agent: its card at `/.well-known/agent-card.json` (public, as the
 * spec has it) and a JSON-RPC interface at POST /v1/a2a, behind the same access as every route.
 * A context is a conversation, owned by its requester as the HTTP API's are (someone else's is "task
 * not found"); each message starts a turn, which is a task; a message to a task waiting for approval
 * carries the decisions and resumes it. Every turn passes the conversation's one admission.
 * Served: SendMessage (blocking, or returning at once), SendStreamingMessage, SubscribeToTask,
 * GetTask, ListTasks (the requester's own), CancelTask, and the push notification configs
 * (push-methods.ts). Not yet: the extended card, answered with UnsupportedOperationError.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import { readConfig, redactorFor } from "../../config.ts";
import type { Env } from "../../env.ts";
import type { TurnView } from "../../conversation/conversation-view.ts";
import type { Network } from "../../runtime/network.ts";
import type { Decision } from "../../runtime/wait/requests.ts";
import type { AppEnv } from "../../http/app-env.ts";
import { inboxOf } from "../../inbox/inbox.ts";
import { errorResponse, HTTP_ERROR_STATUS, HttpError } from "../../http/errors.ts";
import { A2A_RPC_ERROR } from "./rpc-errors.ts";
import { describeProblems, expectOk } from "../../http/request.ts";
import type { ConversationClient } from "../../http/conversation-client.ts";
import { messageFiles } from "../../http/file-inputs.ts";
import type { FileInput } from "../../http/schemas.ts";
import { SSE_HEADERS, type StoredEvent, turnEvents } from "../../wire/index.ts";
import { agentCard } from "./agent-card.ts";
import { a2aStream } from "./a2a-stream.ts";
import { A2A_VERSION, type Task } from "../a2a-wire.ts";
import { DecisionsData, ListTasksParams, RpcRequest, SendMessageParams, TaskIdParams, type WireMessage } from "./a2a-requests.ts";
import { HOW_TO_DECIDE, isTerminal, parseTaskId, taskOf } from "./tasks.ts";
import { clientOf, parsed, RpcFailure } from "./rpc.ts";
import { configsCall, pushConfigAhead, pushMethods } from "./push-methods.ts";
import { pushConfigsPart } from "./push-configs.ts";
import type { Protocol } from "../../http/protocols.ts";
import { A2A_CARD_PATH, A2A_OFFER, A2A_RPC_PATH } from "./offer.ts";
import { ERROR_RESPONSE } from "../../http/openapi.ts";

/** The statuses of a refused credential: HTTP's, on every path. */
const ACCESS_STATUSES = new Set([401, 403]);

/** Methods of A2A 1.0 this Worker knows but does not serve yet. */
const NOT_YET = ["GetExtendedAgentCard"];

/** A method: its result, or (streaming) the response that carries its results. */
type Method = (c: Context<AppEnv>, params: Record<string, unknown>, rpcId: string | number | null) => Promise<unknown>;
const METHODS: Record<string, Method> = {
  SendMessage: sendMessage,
  SendStreamingMessage: sendStreamingMessage,
  SubscribeToTask: subscribeToTask,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  ...pushMethods,
};
const SERVED = `this agent answers ${Object.keys(METHODS).join(", ")}`;

/**
 * The network as an A2A v1.0 agent (docs/a2a.md): its card, and its JSON-RPC interface at POST /v1/a2a.
 * `createHandoffWorker({ protocols: [a2a()] })`; A2A=off in the environment switches it off again.
 */
export function a2a(): Protocol {
  // A message's parts may carry files inline; each conversation keeps its tasks' push configs.
  return {
    ...A2A_OFFER,
    carriesFiles: true,
    openApi: a2aOperations,
    register: registerA2a,
    // The API's errors on its JSON-RPC path (a body over the limit, a failure inside the Worker) are JSON-RPC errors too.
    // A refused credential stays the HTTP API's 401 or 403, as A2A has authentication fail: a client then reports an
    // authentication failure, not a malformed request. The card's errors are the API's.
    errorBody: ({ code, message, details }, path) =>
      path === A2A_RPC_PATH && !ACCESS_STATUSES.has(HTTP_ERROR_STATUS[code])
        ? rpcError(null, fromHttpError(new HttpError(code, message, details)))
        : undefined,
    conversation: pushConfigsPart,
  };
}

/** A2A's part of the OpenAPI document: its JSON-RPC endpoint (the card is a discovery document beside the API). */
function a2aOperations(): Record<string, unknown> {
  const error = ERROR_RESPONSE;
  return {
    "/v1/a2a": {
      post: {
        summary:
          "A2A v1.0 JSON-RPC (A2A-Version: 1.0): SendMessage, GetTask, CancelTask (docs/a2a.md; the card: /.well-known/agent-card.json)",
        requestBody: { required: true, content: { "application/json": { schema: { type: "object" } } } },
        responses: { "200": { description: "A JSON-RPC result or error" }, "401": error },
      },
    },
  };
}

function registerA2a(app: Hono<AppEnv>, networkFor: (env: Env) => Network): void {
  // A2A=off: neither route exists (the card would tell anyone the agents' names and descriptions).
  const served: MiddlewareHandler<AppEnv> = async (c, next) => (readConfig(c.env).A2A === "off" ? notServed(c) : next());
  for (const path of [A2A_CARD_PATH, A2A_RPC_PATH]) app.use(path, served);
  app.get(A2A_CARD_PATH, (c) => {
    const prefix = c.req.path.slice(0, -A2A_CARD_PATH.length);
    return c.json(agentCard(networkFor(c.env), readConfig(c.env), `${new URL(c.req.url).origin}${prefix}`));
  });
  app.post(A2A_RPC_PATH, async (c) => {
    const answered = await answer(c);
    if (answered instanceof Response) return answered;
    // What the conversation sends is redacted already; an error's message is redacted here, like every error body.
    const body = JSON.stringify(redactorFor(c.env).value(answered));
    return new Response(body, { headers: { "content-type": `${answerMediaType(c.req.header("accept"))}; charset=utf-8` } });
  });
}

/** A2A 1.0.1's own media type, for a client that asks for it (its requests are read whichever of the two they name). */
export const A2A_MEDIA_TYPE = "application/a2a+json";

/** The media type a JSON answer is sent in: A2A's own when the client's Accept names it, else plain JSON. */
function answerMediaType(accept: string | undefined): string {
  const asked = (accept ?? "").split(",").map((range) => range.split(";")[0]!.trim().toLowerCase());
  return asked.includes(A2A_MEDIA_TYPE) ? A2A_MEDIA_TYPE : "application/json";
}

function notServed(c: Context<AppEnv>): Response {
  return errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}: this Worker serves no A2A interface (A2A=off).`);
}

async function answer(c: Context<AppEnv>): Promise<Record<string, unknown> | Response> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return rpcError(null, new RpcFailure("parseError", "The body is not JSON."));
  }
  const request = RpcRequest.safeParse(raw);
  // An error carries the request's id whenever it can be read; params that are not an object are invalid params.
  if (!request.success) return rpcError(readableId(raw), new RpcFailure("invalidRequest", describeProblems(request.error)));
  const id = request.data.id ?? null;
  const { params } = request.data;
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params)))
    return rpcError(id, new RpcFailure("invalidParams", "`params` is an object of the method's named parameters."));
  // The spec reads an absent or empty version as 0.3, which this Worker does not serve.
  const version = c.req.header("a2a-version")?.trim() || "0.3";
  if (version !== A2A_VERSION)
    return rpcError(
      id,
      new RpcFailure("versionNotSupported", `A2A ${version} is not served: send A2A-Version: ${A2A_VERSION}.`, {
        supportedVersions: [A2A_VERSION],
      }),
    );
  const method = METHODS[request.data.method];
  try {
    if (!method) throw unknownMethod(request.data.method);
    const result = await method(c, (params ?? {}) as Record<string, unknown>, id);
    return result instanceof Response ? result : { jsonrpc: "2.0", id, result };
  } catch (error) {
    if (error instanceof RpcFailure) return rpcError(id, error);
    if (error instanceof HttpError) return rpcError(id, fromHttpError(error));
    throw error;
  }
}

/** A request's id, when the body has one JSON-RPC allows (a string or a number); else null. */
function readableId(raw: unknown): string | number | null {
  const id = typeof raw === "object" && raw !== null ? (raw as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function unknownMethod(name: string): RpcFailure {
  return NOT_YET.includes(name)
    ? new RpcFailure("unsupportedOperation", `${name} is not served yet: ${SERVED}.`)
    : new RpcFailure("methodNotFound", `No method ${name}: ${SERVED}.`);
}

function rpcError(id: string | number | null, failure: RpcFailure): Record<string, unknown> {
  return {
    jsonrpc: "2.0",
    id,
    error: { code: failure.rpcCode, message: failure.message, ...(failure.details ? { data: failure.details } : {}) },
  };
}

/** A conversation's refusal, as A2A says it: its JSON-RPC code from the one table (`A2A_RPC_ERROR`), the API's code in `data`. */
function fromHttpError(error: HttpError): RpcFailure {
  const data = { code: error.code, ...(error.details ? { details: error.details } : {}) };
  const rpc = A2A_RPC_ERROR[error.code];
  return new RpcFailure(rpc, rpc === "taskNotFound" ? "No such task." : error.message, data);
}

/** A task by id, as its conversation's owner sees it, with the turn it is. */
async function taskById(
  c: Context<AppEnv>,
  id: string,
  historyLength?: number,
): Promise<{ task: Task; view: TurnView; client: ConversationClient }> {
  const named = parseTaskId(id);
  if (!named) throw new RpcFailure("taskNotFound", "No such task.");
  const client = clientOf(c, named.conversationId);
  const view = await expectOk(client.turnView(named.turn));
  return { task: taskOf(named.conversationId, view, historyLength), view, client };
}

/**
 * ListTasks, the requester's own: a context's tasks (its turns, newest first), or without one a signed-in
 * user's latest task of each conversation in their inbox (newest first). Without history unless asked.
 */
async function listTasks(c: Context<AppEnv>, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const query = parsed(ListTasksParams, params);
  const { contextId, pageSize = 50, pageToken, historyLength = 0, statusTimestampAfter } = query;
  const status = query.status === "TASK_STATE_UNSPECIFIED" ? undefined : query.status;
  const since = statusTimestampAfter ? Date.parse(statusTimestampAfter) : undefined;
  const kept = (t: Task) => (!status || t.status.state === status) && (since === undefined || Date.parse(t.status.timestamp) >= since);
  if (contextId) {
    const { tasks, next, total } = await tasksOfContext(c, contextId, {
      pageSize,
      pageToken,
      historyLength,
      kept: status || since ? kept : undefined,
    });
    return { tasks, nextPageToken: next, pageSize, totalSize: total };
  }
  const page = await latestTasksOfUser(c, pageSize, pageToken, historyLength);
  // A user's list is paged by their inbox: the filters keep this page's tasks, and `totalSize` counts them.
  const listed = page.tasks.filter(kept);
  return { tasks: listed, nextPageToken: page.next, pageSize, totalSize: listed.length };
}

/**
 * A context's tasks, newest first: with a filter (`kept`), the tasks it keeps are found before the
 * page is cut (every turn's task is read), so pages hold `pageSize` tasks and `total` counts every match.
 */
async function tasksOfContext(
  c: Context<AppEnv>,
  contextId: string,
  query: { pageSize: number; pageToken: string | undefined; historyLength: number; kept: ((task: Task) => boolean) | undefined },
) {
  const { pageSize, pageToken, historyLength, kept } = query;
  const client = clientOf(c, contextId);
  const before = pageToken ? Number(pageToken) : Number.POSITIVE_INFINITY;
  if (Number.isNaN(before)) throw new RpcFailure("invalidParams", "pageToken is the nextPageToken of a page before.");
  const all = (await expectOk(client.turns())).map((t) => t.turn).sort((a, b) => b - a);
  const taskOfTurn = async (turn: number) => taskOf(contextId, await expectOk(client.turnView(turn)), historyLength);
  if (!kept) {
    const turns = all.filter((turn) => turn < before);
    const page = turns.slice(0, pageSize);
    return { tasks: await Promise.all(page.map(taskOfTurn)), next: turns.length > pageSize ? String(page.at(-1)) : "", total: all.length };
  }
  const matching = (await Promise.all(all.map(taskOfTurn))).filter(kept);
  const after = matching.filter((t) => Number(t.id.slice(t.id.lastIndexOf(":") + 1)) < before);
  const page = after.slice(0, pageSize);
  const last = page.at(-1);
  return { tasks: page, next: after.length > pageSize && last ? last.id.slice(last.id.lastIndexOf(":") + 1) : "", total: matching.length };
}

async function latestTasksOfUser(c: Context<AppEnv>, pageSize: number, pageToken: string | undefined, historyLength: number) {
  const access = c.get("access");
  if (access.kind !== "user")
    throw new RpcFailure("invalidParams", "Name the context (contextId): only a signed-in user has a list of their own.");
  const inbox = await inboxOf(c.env, access.user.id);
  if (!inbox) throw new RpcFailure("internalError", "This Worker binds no INBOXES: a user's list needs the Inbox Durable Object.");
  if (pageToken && !/^\d+(\.|$)/.test(pageToken)) throw new RpcFailure("invalidParams", "pageToken is the nextPageToken of a page before.");
  const page = await inbox.list({ limit: pageSize, before: pageToken || undefined });
  const views = await Promise.all(page.conversations.map(async (entry) => ({ entry, view: await clientOf(c, entry.id).turnView() })));
  // A conversation with no turn yet has no task.
  const tasks = views.flatMap(({ entry, view }) => (view.ok ? [taskOf(entry.id, view.value, historyLength)] : []));
  return { tasks, next: page.next ?? "" };
}

async function getTask(c: Context<AppEnv>, params: Record<string, unknown>): Promise<Task> {
  const { id, historyLength } = parsed(TaskIdParams, params);
  return (await taskById(c, id, historyLength)).task;
}

/** A running task is cancelled (its turn stops); a finished one is not cancelable; cancelling twice answers the cancelled task. */
async function cancelTask(c: Context<AppEnv>, params: Record<string, unknown>): Promise<Task> {
  const { id } = parsed(TaskIdParams, params);
  const { task, client } = await taskById(c, id);
  if (task.status.state === "TASK_STATE_CANCELED") return task;
  if (isTerminal(task.status.state)) throw new RpcFailure("taskNotCancelable", `The task is ${task.status.state}: it cannot be cancelled.`);
  if (task.status.state === "TASK_STATE_INPUT_REQUIRED")
    throw new RpcFailure("taskNotCancelable", "The task waits for approval: deny its calls with a message to it instead.");
  await expectOk(client.cancel());
  return (await taskById(c, id)).task;
}

/** A turn a message started or resumed: its stream (none when the decisions left calls waiting), and how to read its task. */
interface Started {
  stream: ReadableStream<Uint8Array> | null;
  read: () => Promise<Task>;
  /** The client asked for the task as soon as its turn has begun (`returnImmediately`). */
  immediately: boolean;
}

/**
 * A message: to a task waiting for approval it carries the decisions and resumes that task; else it
 * starts a turn (a new task) in its context, a new conversation when it names none. Either way the
 * conversation's admission decides whether it may.
 */
async function startTurn(c: Context<AppEnv>, params: Record<string, unknown>): Promise<Started> {
  const { message, configuration } = parsed(SendMessageParams, params);
  if (message.role !== "ROLE_USER") throw new RpcFailure("invalidParams", "Send the user's message: role ROLE_USER.");
  const historyLength = configuration?.historyLength;
  const immediately = configuration?.returnImmediately === true;
  if (message.taskId) return { ...(await resume(c, message, historyLength)), immediately };
  const text = textOf(message);
  const files = message.parts.flatMap(fileInputOf);
  if (!text && !files.length)
    throw new RpcFailure("invalidParams", "A message that starts a task carries text or files: a part with `text`, `raw` or `url`.");
  // A data URL that is not one is refused before anything is made for the task (its conversation, a push config).
  const options = messageFiles(files);
  const conversationId = message.contextId ?? (await newConversation(c));
  const client = clientOf(c, conversationId);
  const push = configuration?.taskPushNotificationConfig;
  const ahead = push ? await pushConfigAhead(c, conversationId, push) : undefined;
  const turn = await expectOk(client.sendMessage(text, options)).catch(async (error: unknown) => {
    // Refused: the config set ahead for the turn that did not start goes.
    if (ahead) await configsCall(c, conversationId, { kind: "delete", turn: ahead.turn, id: ahead.id, upcoming: true });
    throw error;
  });
  return { stream: turn.events, read: async () => taskOf(conversationId, await expectOk(client.turnView()), historyLength), immediately };
}

/**
 * SendMessage: the task once its turn has run (blocking), or with `returnImmediately` as soon as it
 * has begun: the turn goes on in its Durable Object (it is not driven by this request), and the
 * client follows it with GetTask or SubscribeToTask.
 */
async function sendMessage(c: Context<AppEnv>, params: Record<string, unknown>): Promise<{ task: Task }> {
  const { stream, read, immediately } = await startTurn(c, params);
  if (stream && immediately) {
    const reader = stream.getReader();
    await reader.read();
    void reader.cancel();
  } else if (stream) await drain(stream);
  return { task: await read() };
}

/** SendStreamingMessage: the task, then its turn as it runs, as Server-Sent Events (a refusal is a JSON-RPC error, as for SendMessage). */
async function sendStreamingMessage(c: Context<AppEnv>, params: Record<string, unknown>, rpcId: string | number | null): Promise<Response> {
  const { stream, read } = await startTurn(c, params);
  // Decisions that left calls waiting start no turn: the stream is the task as it stands.
  return new Response(a2aStream(rpcId, stream ? turnEvents(stream) : ended(), read), { headers: SSE_HEADERS });
}

/**
 * SubscribeToTask: the task as it stands, then what follows it from the conversation's event log
 * (no gap, no repeat: from the last event the snapshot saw) until its turn ends; while a person
 * holds the conversation, their answers as they come. A finished task has nothing to follow.
 */
async function subscribeToTask(c: Context<AppEnv>, params: Record<string, unknown>, rpcId: string | number | null): Promise<Response> {
  const { id } = parsed(TaskIdParams, params);
  const { task, view, client } = await taskById(c, id);
  if (!view.latest || isTerminal(task.status.state))
    throw new RpcFailure("unsupportedOperation", `The task is ${task.status.state}: there is nothing more to follow.`);
  const outcome = await expectOk(client.events(view.lastEventId, view.status === "awaiting_human"));
  const read = async () => (await taskById(c, id)).task;
  const events = outcome.kind === "stream" ? turnEvents(outcome.events) : ended();
  return new Response(a2aStream(rpcId, events, read, task), { headers: SSE_HEADERS });
}

/** No events: a turn that has nothing more to say. */
async function* ended(): AsyncGenerator<StoredEvent> {}

/** Decisions for the calls a task waits on: a data part's `decisions`, or "approve" / "deny" for all of them. */
async function resume(c: Context<AppEnv>, message: WireMessage, historyLength?: number): Promise<Omit<Started, "immediately">> {
  const { task, view, client } = await taskById(c, message.taskId!);
  if (message.contextId && message.contextId !== task.contextId)
    throw new RpcFailure("invalidParams", "The message's contextId is not its task's.");
  // A finished task takes no message; one that runs or waits is the conversation's to judge (running, nothing to decide), as every way in.
  if (!view.latest || isTerminal(task.status.state))
    throw new RpcFailure("unsupportedOperation", `The task is ${task.status.state}: send a message without taskId to start a new one.`);
  const outcome = await expectOk(client.decide(decisionsOf(message, view)));
  return { stream: outcome.kind === "stream" ? outcome.events : null, read: async () => (await taskById(c, task.id, historyLength)).task };
}

function decisionsOf(message: WireMessage, view: TurnView): Decision[] {
  for (const part of message.parts) {
    const data = DecisionsData.safeParse(part.data);
    if (data.success) return data.data.decisions;
  }
  const word = textOf(message).trim().toLowerCase();
  if (word !== "approve" && word !== "deny") throw new RpcFailure("invalidParams", HOW_TO_DECIDE);
  return view.pending.map((p) => ({ toolCallId: p.toolCallId, approved: word === "approve" }));
}

/**
 * A file part as the one file shape: its `raw` bytes (base64) with its media type, or a `url` that is a data URL.
 * A URL elsewhere is refused: the Worker fetches no address a client names.
 */
function fileInputOf(part: WireMessage["parts"][number]): FileInput[] {
  const name = part.filename ? { name: part.filename } : {};
  if (part.raw !== undefined) return [{ url: `data:${part.mediaType ?? ""};base64,${part.raw}`, ...name }];
  if (part.url === undefined) return [];
  if (!part.url.startsWith("data:"))
    throw new RpcFailure("invalidParams", "A file part's `url` must be a data URL; send the file's bytes as `raw` (base64) instead.");
  return [{ url: part.url, ...(part.mediaType ? { mediaType: part.mediaType } : {}), ...name }];
}

function textOf(message: WireMessage): string {
  return message.parts.flatMap((p) => (p.text === undefined ? [] : [p.text])).join("\n");
}

/** A new conversation for a message that names no context: its requester's, as POST /v1/conversations makes it. */
async function newConversation(c: Context<AppEnv>): Promise<string> {
  const id = crypto.randomUUID();
  await expectOk(clientOf(c, id).create());
  return id;
}

/** Reads a turn's stream to its end: the turn runs in its Durable Object, and the task is read from what it stored. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  await new Response(stream).arrayBuffer();
}
