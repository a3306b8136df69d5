/**
 * A turn's events as AG-UI 1.0 events (the Agent–User Interaction protocol, `@ag-ui/core`), for a
 * frontend built on it (`HttpAgent`). Each agent's text is a text message named after the agent;
 * calls are tool calls with their results; a step is a step; each change of hands is an activity
 * (`handoff`) the client shows in the transcript, and the holder is the protocol's state; calls
 * waiting for approval end the run as interrupts; a failure is RUN_ERROR with this API's code.
 */
import type { BaseEvent, Interrupt, RunFinishedEvent, RunFinishedOutcome, TokenUsage, EventType as AgUiEventType } from "@ag-ui/core";
import { kindOf, type UserRequest } from "../runtime/wait/requests.ts";
import type { StoredEvent } from "./sse.ts";
import type { EventEncoder } from "./turn-encoding.ts";

/** What an AG-UI client is sent: the protocol's event names, written out (no runtime package is bundled). */
type Out = Omit<BaseEvent, "type"> & { type: `${AgUiEventType}` } & Record<string, unknown>;

/** Who holds the conversation, as the run's state says: an app renders it (an agent, or a person answering for the user). */
export interface AgUiState {
  holder: { name: string; kind: "agent" | "person" };
}

/** What the encoder knows of the run: the client's thread and run, and which participants are people. */
export interface AgUiRun {
  threadId: string;
  runId: string;
  isPerson(name: string): boolean;
  /**
   * A run that follows a person holding the conversation (no message of its own): only the person's
   * messages after event `after` and their hand back are sent, and the run finishes when the follow ends.
   */
  follow?: { after: number };
}

/** The answer's id per step: a step's text and its calls are one assistant message. */
const stepMessage = (id: number) => `step-${id}`;
/** A person's message, and a handoff's activity: their ids name the event, so a thread's ids say how far it has seen. */
const personMessage = (id: number) => `person-${id}`;
const handoffActivity = (id: number) => `handoff-${id}`;

/** The newest person's message or handoff a thread has seen, by the ids this encoder gave them (0: none). */
export function lastSeenEvent(messageIds: readonly string[]): number {
  return Math.max(0, ...messageIds.map((id) => Number(/^(?:person|handoff)-(\d+)$/.exec(id)?.[1] ?? 0)));
}

/** An approval's answer, as an interrupt's `responseSchema` says it: resume with `{ approved, reason? }`. */
export const APPROVAL_RESPONSE_SCHEMA = {
  type: "object",
  properties: { approved: { type: "boolean" }, reason: { type: "string", maxLength: 2000 } },
  required: ["approved"],
  additionalProperties: false,
} as const;

export class AgUiEncoder implements EventEncoder {
  readonly #run: AgUiRun;
  #started = false;
  #finished = false;
  #step: string | null = null;
  #stepAgent: string | undefined;
  #message: string | null = null;
  #openText: string | null = null;
  readonly #interrupts: Interrupt[] = [];
  /** Client tools the run leaves for the application to answer (AG-UI's frontend tools). */
  readonly #clientCalls: string[] = [];

  constructor(run: AgUiRun) {
    this.#run = run;
  }

  encode(event: StoredEvent): string {
    const { follow } = this.#run;
    return this.#frames(follow ? this.#followed(event, follow.after) : this.#events(event));
  }

  /** A stream that ended without its terminal event (a reader let go): the run is told it failed, never left open; a follow is over. */
  end(): string {
    if (this.#finished) return "";
    if (this.#run.follow) return this.#frames([this.#finish({ type: "success" })]);
    return this.fail("The conversation's stream ended before its turn did; read the thread again.");
  }

  /** Once the run is finished, the rest of the conversation's stream is not read. */
  get finished(): boolean {
    return this.#finished;
  }

  fail(message: string): string {
    return this.#frames([{ type: "RUN_ERROR", message, code: "stream_interrupted" }]);
  }

  /** A run that starts no turn (decisions that leave requests waiting): started and ended on those still open. */
  interrupted(open: readonly RequestShown[]): string {
    for (const request of open) this.#wait(request);
    return this.#frames([this.#finish(this.#waiting())]);
  }

  /** A request to the user: a client tool is left for the application (a frontend tool); anything else is an interrupt. */
  #wait(request: RequestShown): void {
    if (kindOf(request).answeredWith(request) === "tool-output") this.#clientCalls.push(request.toolCallId);
    else this.#interrupts.push(requestInterrupt(request));
  }

  /** How a waiting run ends: on its interrupts, or (client tools only) as a success that names the calls left to answer. */
  #waiting(): RunFinishedOutcome {
    if (this.#interrupts.length > 0) return { type: "interrupt", interrupts: this.#interrupts };
    return { type: "success", pendingToolCallIds: this.#clientCalls };
  }

  #frames(events: Out[]): string {
    if (events.length === 0 || this.#finished) return "";
    if (!this.#started) {
      this.#started = true;
      events.unshift({ type: "RUN_STARTED", threadId: this.#run.threadId, runId: this.#run.runId });
    }
    if (events.some((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR")) this.#finished = true;
    return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
  }

  #events(event: StoredEvent): Out[] {
    switch (event.type) {
      case "run-start":
        return [this.#holder(event.agent)];
      case "step-start":
        return this.#stepStart(event);
      case "text-delta":
        return this.#text(this.#message ?? stepMessage(event.id), event.delta);
      case "tool-call":
        return [...this.#closeText(), ...toolCall(event, this.#message)];
      case "tool-result":
        return [toolResult(event)];
      case "approval-required":
        this.#wait({ kind: "approval", ...event });
        return [];
      case "input-required":
        this.#wait(event);
        return [];
      case "delegated":
        return subagentEvents(event);
      case "handoff": {
        const { id, type: _type, ...record } = event;
        return [
          ...this.#closeText(),
          { type: "ACTIVITY_SNAPSHOT", messageId: handoffActivity(id), activityType: "handoff", content: record },
          this.#holder(event.to),
        ];
      }
      case "step-finish":
        return this.#closeStep();
      case "operator-message":
        return operatorMessage(event);
      case "guardrail":
      case "compaction":
      case "memory":
      case "warning": {
        const { id: _id, type, ...value } = event;
        return [{ type: "CUSTOM", name: `handoff.${type}`, value }];
      }
      case "done":
        return [...this.#closeStep(), this.#finish(this.#outcome(event.status), usageOf(event))];
      case "error":
        return [...this.#closeStep(), { type: "RUN_ERROR", message: event.message, code: event.code }];
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown event ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  /** A step starts: its text is one message of its own, and the step is named by its agent. */
  #stepStart(event: Extract<StoredEvent, { type: "step-start" }>): Out[] {
    this.#message = stepMessage(event.id);
    this.#step = `${event.agent}: step ${event.stepIndex}`;
    this.#stepAgent = event.agent;
    return [{ type: "STEP_STARTED", stepName: this.#step }];
  }

  /**
   * What a follow sends of the conversation's events: the person's next message it has not sent
   * before, or their hand back; either ends the run (the client follows again while a person holds it).
   */
  #followed(event: StoredEvent, after: number): Out[] {
    const told = event.id > after && (event.type === "operator-message" || (event.type === "handoff" && event.kind === "hand-back"));
    return told ? [...this.#events(event), this.#finish({ type: "success" })] : [];
  }

  #holder(name: string): Out {
    const snapshot: AgUiState = { holder: { name, kind: this.#run.isPerson(name) ? "person" : "agent" } };
    return { type: "STATE_SNAPSHOT", snapshot };
  }

  #text(messageId: string, delta: string): Out[] {
    if (!delta) return [];
    const out: Out[] = [];
    if (this.#openText !== messageId) {
      out.push(...this.#closeText(), { type: "TEXT_MESSAGE_START", messageId, role: "assistant", name: this.#stepAgent });
      this.#openText = messageId;
    }
    out.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta });
    return out;
  }

  #closeText(): Out[] {
    if (!this.#openText) return [];
    const messageId = this.#openText;
    this.#openText = null;
    return [{ type: "TEXT_MESSAGE_END", messageId }];
  }

  #closeStep(): Out[] {
    const out = this.#closeText();
    if (this.#step) out.push({ type: "STEP_FINISHED", stepName: this.#step });
    this.#step = null;
    return out;
  }

  #outcome(status: Extract<StoredEvent, { type: "done" }>["status"]): RunFinishedOutcome {
    if (status === "awaiting_approval" || status === "awaiting_input") return this.#waiting();
    return status === "cancelled" ? { type: "cancelled" } : { type: "success" };
  }

  #finish(outcome: RunFinishedOutcome, usage?: TokenUsage[]): Out {
    const finished: Omit<RunFinishedEvent, "type"> = {
      threadId: this.#run.threadId,
      runId: this.#run.runId,
      outcome,
      ...(usage ? { usage } : {}),
    };
    return { type: "RUN_FINISHED", ...finished };
  }
}

function toolResult(event: Extract<StoredEvent, { type: "tool-result" }>): Out {
  const content = typeof event.result === "string" ? event.result : JSON.stringify(event.result);
  return {
    type: "TOOL_CALL_RESULT",
    messageId: `result-${event.id}`,
    toolCallId: event.toolCallId,
    content,
    role: "tool",
    ...(event.isError || event.denied ? { metadata: { isError: event.isError, ...(event.denied ? { denied: true } : {}) } } : {}),
  };
}

/** A request to the user as the stream and the view show it. */
export type RequestShown = UserRequest;

/**
 * A request as an interrupt, answered by a resume entry whose payload fits its `responseSchema`: what its kind's answer
 * fits (a question's, a choice's, an elicitation form's), or `{ approved, reason? }` for a yes or no. Its id is the call's;
 * its words, reason and metadata (the kind's own fields: a server, a URL, options) come from its kind.
 */
export function requestInterrupt(request: RequestShown): Interrupt {
  const kind = kindOf(request);
  const { toolCallId, name, agent, args, expiresAt } = request;
  const answer = kind.answeredWith(request) === "answer" ? kind.answerSchema(request) : undefined;
  return {
    // A delegated agent's request belongs to its subagent run.
    ...(request.delegated ? { subagentRunId: request.delegated.path.join("/") } : {}),
    id: toolCallId,
    reason: kind.interruptReason,
    message: kind.said(request),
    toolCallId,
    responseSchema: answer ?? APPROVAL_RESPONSE_SCHEMA,
    ...(expiresAt ? { expiresAt } : {}),
    metadata: { agent, tool: name, kind: request.kind, ...(args === undefined ? {} : { args }), ...ownFields(request) },
  };
}

/** What a request's kind shows beside the base fields (a server, a URL, options), less what the interrupt says itself. */
function ownFields(request: RequestShown): Record<string, unknown> {
  const { kind: _kind, toolCallId: _id, name: _name, args: _args, agent: _agent, expiresAt: _at, delegated: _path, ...own } = request;
  const { earlier: _kept, recorded: _remembered, message: _said, schema: _answer, ...shown } = own as Record<string, unknown>;
  return shown;
}

/**
 * A delegated agent's event as AG-UI 1.0's own subagent events: SUBAGENT_STARTED under the delegating call (and the parent
 * subagent, for a child of a child), its text and calls attributed to its `subagentRunId` (the path of calls), and
 * SUBAGENT_FINISHED with its answer, or SUBAGENT_ERROR.
 */
function subagentEvents(event: Extract<StoredEvent, { type: "delegated" }>): Out[] {
  const subagentRunId = event.path.join("/");
  const inner = event.event;
  switch (inner.type) {
    case "run-start":
      return [
        {
          type: "SUBAGENT_STARTED",
          subagentRunId,
          name: event.agent,
          parentToolCallId: event.path.at(-1),
          ...(event.path.length > 1 ? { parentSubagentRunId: event.path.slice(0, -1).join("/") } : {}),
        },
      ];
    case "text-delta":
      return [{ type: "TEXT_MESSAGE_CHUNK", messageId: `sub-${subagentRunId}`, role: "assistant", delta: inner.delta, subagentRunId }];
    case "tool-call":
      return [
        { type: "TOOL_CALL_START", toolCallId: inner.toolCallId, toolCallName: inner.name, subagentRunId },
        { type: "TOOL_CALL_ARGS", toolCallId: inner.toolCallId, delta: JSON.stringify(inner.args ?? {}), subagentRunId },
        { type: "TOOL_CALL_END", toolCallId: inner.toolCallId, subagentRunId },
      ];
    case "tool-result":
      return [{ ...toolResult({ ...inner, id: event.id }), subagentRunId }];
    case "done":
      return [
        {
          type: "SUBAGENT_FINISHED",
          subagentRunId,
          result: inner.text,
          outcome: { type: inner.status === "completed" ? "success" : "suspended" },
        },
      ];
    case "error":
      return [{ type: "SUBAGENT_ERROR", subagentRunId, message: inner.message, code: inner.code }];
    default:
      return [];
  }
}

function usageOf(event: Extract<StoredEvent, { type: "done" }>): TokenUsage[] | undefined {
  if (!event.usage || event.usage.modelCalls === 0) return undefined;
  const { inputTokens, outputTokens } = event.usage;
  return [{ inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }];
}

/** A tool call as AG-UI's start, arguments and end, under the step's message. */
function toolCall(event: Extract<StoredEvent, { type: "tool-call" }>, message: string | null): Out[] {
  return [
    { type: "TOOL_CALL_START", toolCallId: event.toolCallId, toolCallName: event.name, parentMessageId: message ?? undefined },
    { type: "TOOL_CALL_ARGS", toolCallId: event.toolCallId, delta: JSON.stringify(event.args ?? {}) },
    { type: "TOOL_CALL_END", toolCallId: event.toolCallId },
  ];
}

/** A person's message, whole, as an assistant message named for the person. */
function operatorMessage(event: Extract<StoredEvent, { type: "operator-message" }>): Out[] {
  return [
    { type: "TEXT_MESSAGE_START", messageId: personMessage(event.id), role: "assistant", name: event.operator ?? event.agent },
    { type: "TEXT_MESSAGE_CONTENT", messageId: personMessage(event.id), delta: event.text },
    { type: "TEXT_MESSAGE_END", messageId: personMessage(event.id) },
  ];
}
