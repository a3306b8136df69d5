/**
 * A turn's events as A2A's streaming answer (SendStreamingMessage): Server-Sent Events, each one
 * JSON-RPC response whose result is a stream response. The task comes first (working, with the
 * user's message); the agents' text streams as artifact chunks as the model produces it, one
 * artifact per step; each step's text then lands in the task's history as an agent message (a
 * working status update carrying it); a handoff is a working status update whose metadata names
 * the new holder; a person's answer is an agent message too; the last is the task's status, read
 * from what the conversation stored.
 */
import { HANDOFF_EXTENSION, type OutMessage, type Task } from "../a2a-wire.ts";
import type { StoredEvent } from "../../wire/index.ts";

/** What the stream needs of the conversation: the task of the turn now running or just ended. */
export type TaskReader = () => Promise<Task>;

/** One SSE event: a JSON-RPC response carrying a stream response. */
function frame(id: string | number | null, result: Record<string, unknown>): string {
  return `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`;
}

/**
 * The A2A stream of a turn: `read` gives the task once the turn has begun and again once it has
 * ended; `first`, the task to start with (a subscription's snapshot), sent before any event.
 */
export function a2aStream(
  rpcId: string | number | null,
  turn: AsyncIterable<StoredEvent>,
  read: TaskReader,
  first?: Task,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      // The task the client was sent first: a failure's update names it.
      let sent = first ?? null;
      const send = (result: Record<string, unknown>) => {
        if (result.task) sent = result.task as Task;
        controller.enqueue(encoder.encode(frame(rpcId, result)));
      };
      try {
        if (first) send({ task: first });
        await translate(turn, read, send, first ?? null);
      } catch (error) {
        // The turn's stream broke off (the Durable Object went away): say so as a failed status, the client's last word.
        const status = { state: "TASK_STATE_FAILED", timestamp: new Date().toISOString() };
        send({ statusUpdate: { taskId: sent?.id ?? "", contextId: sent?.contextId ?? "", status, metadata: { reason: String(error) } } });
      }
      controller.close();
    },
  });
}

/**
 * The task as the stream opens it: working, with the user's message. Read once the turn has begun,
 * the task may already be further on (a fast turn may have ended): what follows streams the rest.
 */
function opening(task: Task): Task {
  return {
    ...task,
    status: { state: "TASK_STATE_WORKING", timestamp: task.status.timestamp },
    history: task.history.filter((m) => m.role === "ROLE_USER"),
  };
}

async function translate(
  turn: AsyncIterable<StoredEvent>,
  read: TaskReader,
  send: (result: Record<string, unknown>) => void,
  first: Task | null,
): Promise<void> {
  let task = first;
  let step = 0;
  let agent = "";
  let text = "";
  let chunks = 0;
  const stamp = () => new Date().toISOString();
  for await (const event of turn) {
    if (!task) {
      task = opening(await read());
      send({ task });
    }
    const { id: taskId, contextId } = task;
    if (event.type === "step-start") [step, agent, text, chunks] = [event.stepIndex, event.agent, "", 0];
    if (event.type === "text-delta") {
      text += event.delta;
      const artifact = { artifactId: `${taskId}:step-${step}`, name: `step ${step}`, parts: [{ text: event.delta }] };
      send({ artifactUpdate: { taskId, contextId, artifact, append: chunks++ > 0, lastChunk: false } });
    }
    // Working progress, each an agent's message: a step's text, a person's answer, a delegated agent's answer.
    const working = (messageId: string, said: string, metadata: Record<string, unknown>) => {
      const message: OutMessage = { messageId, contextId, taskId, role: "ROLE_AGENT", parts: [{ text: said }], metadata };
      send({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING", message, timestamp: stamp() } } });
    };
    if (event.type === "step-finish" && text) working(`${taskId}:step-${step}`, text, { agent });
    if (event.type === "operator-message") {
      working(`${taskId}:person-${Date.now()}`, event.text, { agent: event.agent, person: true });
      // The person answered: the task is done (the conversation stays theirs for the user's next message, a new task).
      break;
    }
    if (event.type === "delegated" && event.event.type === "done" && event.event.text)
      working(`${taskId}:delegated-${event.id}`, event.event.text, { agent: event.agent, delegation: { path: event.path } });
    if (event.type === "handoff") {
      const { id: _id, ...handoff } = event;
      const metadata = { [HANDOFF_EXTENSION]: { holder: event.to, handoff } };
      send({ statusUpdate: { taskId, contextId, status: { state: "TASK_STATE_WORKING", timestamp: stamp() }, metadata } });
    }
  }
  // The end, as the conversation stored it: completed, waiting for approval, held by a person, failed or cancelled.
  const final = await read();
  if (!task) send({ task: final });
  else send({ statusUpdate: { taskId: final.id, contextId: final.contextId, status: final.status, metadata: final.metadata } });
}
