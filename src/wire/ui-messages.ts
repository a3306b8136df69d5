import type { ClientHistory } from "./client-history.ts";
import type { HandoffRecord, ReturnRecord } from "../runtime/handoff/types.ts";
import type { FileRef, Message, ToolCall, ToolMessage } from "../runtime/messages.ts";
import { type Decision, isAnswer, kindOf, publicRequest, type UserRequest } from "../runtime/wait/requests.ts";
import { type Suspension } from "../runtime/wait/suspension.ts";

/** A part of a UI message, in the AI SDK's `UIMessage` shape. */
export type UIPart =
  | { type: "step-start" }
  | { type: "text"; text: string; state: "done" }
  | { type: "file"; mediaType: string; filename: string; url: string }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: "input-available" | "approval-requested" | "approval-responded" | "output-available" | "output-error" | "output-denied";
      input: unknown;
      output?: unknown;
      errorText?: string;
      approval?: { id: string; approved?: boolean; reason?: string };
    }
  | { type: "data-handoff"; id: string; data: HandoffRecord }
  | { type: "data-request"; id: string; data: UserRequest };

/** A message as `useChat({ messages })` takes it. */
export interface UIMessageOut {
  id: string;
  role: "user" | "assistant";
  parts: UIPart[];
}

type ToolPart = Extract<UIPart, { toolCallId: string }>;

/**
 * The stored conversation as the AI SDK's `UIMessage[]`, the parts as the UI message stream builds
 * them: a user message each, and one assistant message per turn with a `step-start` per step, its
 * text, its tool calls in their final states, approvals still awaited, and each handoff as a
 * `data-handoff` part. Ids are stable: `msg-<index of the message in the history>`; `offset` is the
 * index of the first of `messages` when they are a page. A user's files are file parts whose `url` is `fileUrl`'s.
 */
/** Where a client reads a conversation's file: its file route (`GET /v1/conversations/:id/files/:fileId`). */
export function conversationFileUrl(conversationId: string): (file: FileRef) => string {
  return (file) => `/v1/conversations/${conversationId}/files/${file.id}`;
}

export function toUIMessages(history: ClientHistory, offset = 0, fileUrl: (file: FileRef) => string = (file) => file.id): UIMessageOut[] {
  const out: UIMessageOut[] = [];
  // Transfers and on-call returns are drawn after their call's result; an on-answer return closes
  // the turn of the transfer that opened its frame; a person's hand back has no part.
  const byCall = new Map<string, HandoffRecord>();
  const onAnswer = new Map<string, ReturnRecord>();
  for (const h of history.handoffs) {
    if (h.kind === "return" && h.mode === "on-answer") onAnswer.set(h.openedBy, h);
    else if (h.kind !== "hand-back") byCall.set(h.toolCallId, h);
  }
  const parts = new Map<string, ToolPart>();
  let assistant: UIMessageOut | null = null;
  let returned: ReturnRecord | undefined;
  const closeTurn = () => {
    if (assistant && returned) assistant.parts.push({ type: "data-handoff", id: handoffPartId(returned), data: returned });
    returned = undefined;
  };
  const steps: Array<{ message: Message; index: number }> = history.messages.map((message, i) => ({ message, index: offset + i }));
  const suspended = history.suspension;
  if (suspended) steps.push({ message: suspended.assistant, index: offset + history.messages.length });
  for (const { message, index } of steps) {
    if (message.role === "user") {
      closeTurn();
      const files = (message.files ?? []).map((file) => filePart(file, fileUrl));
      const text: UIPart[] = message.content ? [{ type: "text", text: message.content, state: "done" }] : [];
      out.push({ id: `msg-${index}`, role: "user", parts: [...text, ...files] });
      assistant = null;
      continue;
    }
    if (message.role === "system") continue;
    if (!assistant) {
      assistant = { id: `msg-${index}`, role: "assistant", parts: [] };
      out.push(assistant);
    }
    if (message.role === "assistant") {
      assistant.parts.push({ type: "step-start" }, ...stepParts(message.content, message.toolCalls ?? [], parts));
      continue;
    }
    const part = parts.get(message.toolCallId);
    if (part) Object.assign(part, resultState(message));
    // What the call saved (a label, a chart) follows its result, as the live stream sends it.
    for (const file of message.files ?? []) assistant.parts.push(filePart(file, fileUrl));
    const handoff = byCall.get(message.toolCallId);
    if (handoff) assistant.parts.push({ type: "data-handoff", id: handoffPartId(handoff), data: handoff });
    returned = onAnswer.get(message.toolCallId) ?? returned;
  }
  closeTurn();
  if (suspended) answerSuspended(suspended, history.decisions, parts, assistant);
  return out;
}

/**
 * The id of a handoff's `data-handoff` part, the same in the live stream and in /ui-messages: its
 * call's id, an on-answer return's after the transfer that opened it, a hand back's after its event.
 */
export function handoffPartId(record: HandoffRecord, eventId?: number): string {
  if (record.kind === "hand-back") return `hand-back-${eventId ?? 0}`;
  return record.kind === "return" && record.mode === "on-answer" ? `return-${record.openedBy}` : record.toolCallId;
}

function filePart(file: FileRef, fileUrl: (file: FileRef) => string): UIPart {
  return { type: "file", mediaType: file.mediaType, filename: file.name, url: fileUrl(file) };
}

function stepParts(text: string | null, calls: readonly ToolCall[], parts: Map<string, ToolPart>): UIPart[] {
  const out: UIPart[] = text ? [{ type: "text", text, state: "done" }] : [];
  for (const call of calls) {
    const part: ToolPart = { type: `tool-${call.name}`, toolCallId: call.id, state: "input-available", input: parsed(call.arguments) };
    parts.set(call.id, part);
    out.push(part);
  }
  return out;
}

/** The id of a request's `data-request` part, the same in the live stream and in /ui-messages. */
export function requestPartId(toolCallId: string): string {
  return `request-${toolCallId}`;
}

/**
 * The suspended step's answered calls, the ones decided that wait for the rest, and the ones still awaiting the user:
 * an approval as the AI SDK has them, any other request as an input-available call with its `data-request` part.
 */
function answerSuspended(
  suspension: Suspension,
  decisions: readonly Decision[],
  parts: Map<string, ToolPart>,
  assistant: UIMessageOut | null,
): void {
  for (const result of suspension.results) {
    const part = result && parts.get(result.toolCallId);
    if (part && result) Object.assign(part, resultState(result));
  }
  const decided = new Map(decisions.map((decision) => [decision.toolCallId, decision]));
  for (const request of suspension.pending) {
    const { toolCallId } = request;
    const part = parts.get(toolCallId);
    const decision = decided.get(toolCallId);
    if (!part) continue;
    if (kindOf(request).waits !== "approval") {
      if (decision)
        Object.assign(
          part,
          isAnswer(decision) ? { state: "output-available", output: decision.answer } : { state: "output-error", errorText: "declined" },
        );
      else assistant?.parts.push({ type: "data-request", id: requestPartId(toolCallId), data: publicRequest(request) });
      continue;
    }
    const { toolCallId: _id, ...said } = decision ?? { toolCallId };
    if (decision) Object.assign(part, { state: "approval-responded", approval: { id: toolCallId, ...said } });
    else Object.assign(part, { state: "approval-requested", approval: { id: toolCallId } });
  }
}

/** A call's final state; a person's decision stays on the part, as useChat keeps the response it sent. */
function resultState(result: ToolMessage): Partial<ToolPart> {
  // The AI SDK's approval has its id, the decision and its reason (what was asked stays in the stored record).
  const { message: _asked, ...decided } = result.approval ?? {};
  const approval = result.approval && { approval: { id: result.toolCallId, ...decided } };
  if (result.approval?.approved === false) return { state: "output-denied", ...approval };
  if (result.isError) return { state: "output-error", errorText: result.content, ...approval };
  return { state: "output-available", output: parsed(result.content), ...approval };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
