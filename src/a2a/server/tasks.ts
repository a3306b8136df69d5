/**
 * A conversation's turns as A2A tasks: a context is a conversation, each turn a task of it (id
 * `<conversation>:<turn>`). The turn's user and agent messages are the task's history; its status
 * is the turn's (a turn waiting for approval is input-required, with the pending calls in a data
 * part; one handed to a person is working until the person answers or hands back); who holds the conversation, and the turn's handoffs,
 * are in the task's metadata under this project's extension.
 */
import type { TurnView } from "../../conversation/conversation-view.ts";
import type { Message } from "../../runtime/messages.ts";
import { type ApprovalDecision, kindOf, REQUEST_EXPIRED, waitingStatus } from "../../runtime/wait/requests.ts";
import { HANDOFF_EXTENSION, type OutMessage, type Task, type TaskState } from "../a2a-wire.ts";

/** A task's id: its conversation and turn. Conversation ids have no colon, so the last one parts them. */
export function taskIdOf(conversationId: string, turn: number): string {
  return `${conversationId}:${turn}`;
}

/** The conversation and turn a task id names, or null when it names none. */
export function parseTaskId(id: string): { conversationId: string; turn: number } | null {
  const match = /^([A-Za-z0-9_-]{1,128}):([1-9]\d{0,8})$/.exec(id);
  return match ? { conversationId: match[1]!, turn: Number(match[2]) } : null;
}

/** How a client answers a task that waits for approval. */
export const HOW_TO_DECIDE =
  'Answer with a data part { "decisions": [{ "toolCallId", "approved" }] } (an approval, or false to decline anything) ' +
  'or [{ "toolCallId", "answer" }] (a question, a client tool, a form), or the text "approve" or "deny".';

const STATES: Record<TurnView["status"], TaskState> = {
  running: "TASK_STATE_WORKING",
  // A person holds the conversation: the task goes on until they answer or hand back (stateOf).
  awaiting_human: "TASK_STATE_WORKING",
  awaiting_approval: "TASK_STATE_INPUT_REQUIRED",
  awaiting_input: "TASK_STATE_INPUT_REQUIRED",
  completed: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED",
  cancelled: "TASK_STATE_CANCELED",
  // A turn rewound by a retry or an edit was replaced by a later one.
  rewound: "TASK_STATE_CANCELED",
};

/**
 * The task's state: the turn's, but for a turn that handed the conversation to a person, which
 * stays working until the person answers or hands back, and is then completed (their answer is its
 * last message).
 */
function stateOf(view: TurnView): TaskState {
  if (view.status !== "awaiting_human") return STATES[view.status];
  const person = view.handoffs.findLast((h) => h.kind === "transfer")?.to;
  const answered = view.messages.some((m) => m.role === "assistant" && m.agent === person && m.content);
  const handedBack = view.handoffs.some((h) => h.kind === "hand-back");
  return answered || handedBack ? "TASK_STATE_COMPLETED" : "TASK_STATE_WORKING";
}

/** Whether a task in this state takes no new message and cannot be cancelled. */
export function isTerminal(state: TaskState): boolean {
  return state === "TASK_STATE_COMPLETED" || state === "TASK_STATE_FAILED" || state === "TASK_STATE_CANCELED";
}

/** The task a turn is, with its last `historyLength` messages when given. */
export function taskOf(conversationId: string, view: TurnView, historyLength?: number): Task {
  const id = taskIdOf(conversationId, view.turn);
  const message = (
    role: OutMessage["role"],
    index: number,
    parts: OutMessage["parts"],
    metadata?: Record<string, unknown>,
  ): OutMessage => ({
    messageId: `${id}:${index}`,
    contextId: conversationId,
    taskId: id,
    role,
    parts,
    ...(metadata ? { metadata } : {}),
  });
  const history = view.messages.flatMap((m, index) => {
    if (m.role === "user") return [message("ROLE_USER", index, [{ text: m.content }])];
    if (m.role !== "assistant") return [];
    const said = m.content ? [message("ROLE_AGENT", index, [{ text: m.content }], { agent: m.agent })] : [];
    // The client's message that decided this step's calls, sent into the task while it waited: its decisions, as it sent them.
    const decisions = decisionsOn(m, view.messages.slice(index + 1));
    return decisions.length
      ? [
          ...said,
          { ...message("ROLE_USER", index, [{ data: { decisions }, mediaType: "application/json" }]), messageId: `${id}:${index}:decided` },
        ]
      : said;
  });
  const state = stateOf(view);
  return {
    id,
    contextId: conversationId,
    status: { state, ...statusMessage(view, state, message), timestamp: new Date().toISOString() },
    history: historyLength === undefined ? history : history.slice(Math.max(0, history.length - historyLength)),
    metadata: { [HANDOFF_EXTENSION]: { holder: view.holder, handoffs: view.handoffs } },
  };
}

/** The decisions made on an assistant message's calls, read from their results (each records the decision it ran or was declined by). */
function decisionsOn(assistant: Message, after: readonly Message[]): ApprovalDecision[] {
  if (assistant.role !== "assistant" || !assistant.toolCalls?.length) return [];
  const ids = new Set(assistant.toolCalls.map((call) => call.id));
  return after.flatMap((m) =>
    // A call the deadline declined was decided by no one's message.
    m.role === "tool" && ids.has(m.toolCallId) && m.approval && m.approval.reason !== REQUEST_EXPIRED
      ? [{ toolCallId: m.toolCallId, approved: m.approval.approved, ...(m.approval.reason ? { reason: m.approval.reason } : {}) }]
      : [],
  );
}

/** What the status says beyond its state: the calls that wait for a decision, or why the turn failed. */
function statusMessage(
  view: TurnView,
  state: TaskState,
  message: (role: OutMessage["role"], index: number, parts: OutMessage["parts"]) => OutMessage,
): { message?: OutMessage } {
  if (state === "TASK_STATE_INPUT_REQUIRED") {
    const approvals = waitingStatus(view.pending) === "awaiting_approval";
    const names = view.pending.map((p) => (kindOf(p).waits === "approval" ? p.name : `${p.name} (${p.kind})`)).join(", ");
    // Each request whole: its kind, and what it shows the user (a question's message and schema, an elicitation's form or URL).
    return {
      message: message("ROLE_AGENT", -1, [
        { text: `${approvals ? "Waiting for approval" : "Waiting for the user"}: ${names}. ${HOW_TO_DECIDE}` },
        { data: { pending: view.pending }, mediaType: "application/json" },
      ]),
    };
  }
  if (state === "TASK_STATE_FAILED")
    return { message: message("ROLE_AGENT", -1, [{ text: `The turn failed: ${view.error ?? "unknown"}.` }]) };
  return {};
}
