/**
 * A remote agent's answer to SendStreamingMessage (or SendMessage), read as this runtime's remote
 * events: artifact chunks stream as text deltas; an agent message streams too unless artifacts
 * already carried the task's text (servers put the same text in both: the chunks as it is made,
 * the message for the task's history); the task's last state says how the call ends. What A2A does
 * not say is `remote_invalid`, a failed or rejected task `remote_failed`.
 */
import * as z from "zod";
import { RuntimeError } from "../../runtime/errors.ts";
import type { RemoteEvent, RemoteState } from "../../runtime/ports/remote-port.ts";
import { HANDOFF_EXTENSION } from "../a2a-wire.ts";

/** The answer's schemas, built on a Worker's first call to a remote agent (most never make one), not at an isolate's start. */
let built: ReturnType<typeof buildWire> | undefined;
const wire = () => (built ??= buildWire());
function buildWire() {
  const Part = z.object({ text: z.string().optional(), data: z.unknown().optional() }).loose();
  const Message = z
    .object({
      messageId: z.string().optional(),
      role: z.string().optional(),
      parts: z.array(Part).default([]),
      contextId: z.string().optional(),
      taskId: z.string().optional(),
    })
    .loose();
  const Status = z.object({ state: z.string(), message: Message.optional() }).loose();
  const Task = z
    .object({
      id: z.string().min(1),
      contextId: z.string().min(1),
      status: Status,
      artifacts: z.array(z.object({ parts: z.array(Part) }).loose()).default([]),
      history: z.array(Message).default([]),
    })
    .loose();
  // The wrappers strip what they do not name (`in` narrows them); what they carry keeps its other fields.
  const StreamResponse = z.union([
    z.object({ task: Task }),
    z.object({ message: Message }),
    z.object({ statusUpdate: z.object({ taskId: z.string(), contextId: z.string(), status: Status }).loose() }),
    z.object({
      artifactUpdate: z.object({ taskId: z.string(), contextId: z.string(), artifact: z.object({ parts: z.array(Part) }).loose() }).loose(),
    }),
  ]);
  const RpcResponse = z.union([
    z.object({ jsonrpc: z.literal("2.0"), result: StreamResponse }),
    z.object({ jsonrpc: z.literal("2.0"), error: z.object({ code: z.number(), message: z.string() }) }),
  ]);
  return { Status, Message, StreamResponse, RpcResponse };
}
type Wire = ReturnType<typeof wire>;
type Status = z.infer<Wire["Status"]>;
type Message = z.infer<Wire["Message"]>;

/** States a task goes on from: a stream's opening task in one of them is not its end. */
const OPEN = new Set(["TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"]);
const INTERRUPTED = new Set(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);
const FAILED = new Set(["TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"]);

/** What the reader has learned of the call so far. */
interface Progress {
  agent: string;
  state: RemoteState;
  /** Text already streamed by artifact chunks: agent messages then repeat it. */
  chunked: boolean;
  said: string;
  ended: boolean;
  /** Messages already read: a final status often repeats the last one. */
  seen: Set<string>;
  /** The task this call answers (it asked for input): its snapshot, still waiting, comes first and is not the end. */
  continuing: string | undefined;
}

/** What a call's reading starts from; `continuing` is the task the message answers, if any. */
export function startReading(agent: string, continuing: string | undefined): Progress {
  return { agent, state: {}, chunked: false, said: "", ended: false, seen: new Set<string>(), continuing };
}

/** One JSON-RPC response (a frame of the stream, or a whole answer) as the events it means. */
export function* readResponse(at: Progress, raw: string): Generator<RemoteEvent, Progress> {
  const { agent } = at;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw invalid(agent, `answered something that is not JSON (${raw.slice(0, 80)})`);
  }
  const parsed = wire().RpcResponse.safeParse(json);
  if (!parsed.success) throw invalid(agent, `answered a JSON-RPC response A2A does not define: ${z.prettifyError(parsed.error)}`);
  if ("error" in parsed.data)
    throw new RuntimeError(
      "remote_failed",
      `Remote agent '${agent}' refused the message: ${parsed.data.error.message} (${parsed.data.error.code}).`,
    );
  yield* readResult(at, parsed.data.result);
  return at;
}

function* readResult(at: Progress, result: z.infer<Wire["StreamResponse"]>): Generator<RemoteEvent> {
  if ("artifactUpdate" in result) {
    const { taskId, contextId, artifact } = result.artifactUpdate;
    at.state = { contextId, taskId };
    for (const part of artifact.parts) if (part.text) yield* say(at, part.text, true);
    return;
  }
  if ("message" in result) {
    // A message for an answer: no task, nothing to wait for.
    const { contextId } = result.message;
    at.state = contextId ? { contextId } : at.state;
    yield* readMessage(at, result.message);
    yield* end(at, { state: "TASK_STATE_COMPLETED" });
    return;
  }
  const { status, contextId, taskId } =
    "task" in result ? { ...result.task, taskId: result.task.id } : { ...result.statusUpdate, taskId: result.statusUpdate.taskId };
  at.state = { contextId, taskId };
  if ("task" in result && taskId === at.continuing && INTERRUPTED.has(status.state)) {
    // The waiting task as it was before this answer: its question was read when it was asked.
    at.continuing = undefined;
    if (status.message?.messageId) at.seen.add(status.message.messageId);
    return;
  }
  if (status.message) yield* readMessage(at, status.message);
  // A task that comes already ended (SendMessage's answer, or a server that ran the turn first) carries its text with it.
  if ("task" in result && !at.said && !OPEN.has(status.state)) yield* readEndedTask(at, result.task);
  yield* end(at, status);
}

/** An ended task's answer: its artifacts' text, else its agent messages after the last user message. */
function* readEndedTask(
  at: Progress,
  task: { artifacts: Array<{ parts: Array<{ text?: string | undefined }> }>; history: Message[] },
): Generator<RemoteEvent> {
  const chunks = task.artifacts.flatMap((a) => a.parts.flatMap((p) => (p.text ? [p.text] : [])));
  if (chunks.length > 0) {
    for (const chunk of chunks) yield* say(at, chunk, true);
    return;
  }
  const lastUser = task.history.findLastIndex((m) => m.role === "ROLE_USER");
  for (const message of task.history.slice(lastUser + 1)) yield* readMessage(at, message);
}

function* readMessage(at: Progress, message: Message): Generator<RemoteEvent> {
  if (message.role === "ROLE_USER" || (message.messageId && at.seen.has(message.messageId))) return;
  if (message.messageId) at.seen.add(message.messageId);
  for (const part of message.parts) {
    const handBack = handBackOf(part.data);
    if (handBack !== undefined) yield { type: "hand-back", summary: handBack };
    else if (part.text && !at.chunked) yield* say(at, part.text, false);
  }
}

function* say(at: Progress, text: string, chunk: boolean): Generator<RemoteEvent> {
  if (chunk) at.chunked = true;
  at.said += text;
  yield { type: "text-delta", delta: text };
}

/** This project's hand-back data part: `{ "<extension>": { handBack: { summary } } }`. */
function handBackOf(data: unknown): string | undefined {
  if (!data || typeof data !== "object" || !(HANDOFF_EXTENSION in data)) return undefined;
  const ours = (data as Record<string, unknown>)[HANDOFF_EXTENSION];
  const handBack = ours && typeof ours === "object" && "handBack" in ours ? ours.handBack : undefined;
  if (!handBack || typeof handBack !== "object") return undefined;
  return "summary" in handBack && typeof handBack.summary === "string" ? handBack.summary : "";
}

/** A status that ends the call: completed, waiting for the user, or failed. Working goes on. */
function* end(at: Progress, status: Status): Generator<RemoteEvent> {
  if (at.ended || OPEN.has(status.state)) return;
  const why = status.message?.parts.map((p) => p.text ?? "").join("") || "no reason given";
  if (FAILED.has(status.state))
    throw new RuntimeError(
      "remote_failed",
      `Remote agent '${at.agent}' ended its task ${status.state.replace("TASK_STATE_", "").toLowerCase()}: ${why}.`,
    );
  at.ended = true;
  if (status.state === "TASK_STATE_COMPLETED") {
    const { taskId: _done, ...state } = at.state;
    at.state = state;
    yield { type: "remote-state", state };
    yield { type: "finish", finishReason: "stop" };
    return;
  }
  if (!INTERRUPTED.has(status.state)) throw invalid(at.agent, `ended its task in a state A2A does not define: ${status.state}`);
  if (status.state === "TASK_STATE_AUTH_REQUIRED" && !at.said)
    yield* say(at, `'${at.agent}' needs authorization before it can go on: ${why}.`, false);
  yield { type: "remote-state", state: at.state };
  yield { type: "finish", finishReason: "input_required" };
}

export function invalid(agent: string, what: string): RuntimeError {
  return new RuntimeError("remote_invalid", `Remote agent '${agent}' ${what}.`);
}
