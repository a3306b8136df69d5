/**
 * The events of a turn: one flat union keyed on `type`, plain JSON so they cross any wire. Each
 * event is a named type and a zod schema that must describe the same values (`exactly` does not
 * compile otherwise), so what a client can read of the stream (the OpenAPI document's components,
 * built from these) is what the code sends; the test suites check every event they receive against
 * its schema.
 */
import * as z from "zod";
import { exactly } from "./schema/exactly.ts";
import type { HandBackRecord, HandoffRecord, OperatorIdentity, ReturnRecord, TransferRecord } from "./handoff/types.ts";
import type { CallPlan, FileRef } from "./messages.ts";
import type { Usage, UsageTotals } from "./usage.ts";
import { type Memory, MemorySchema } from "./ports/memory-port.ts";
import { type ApprovalRequest, requestKinds, type UserRequest } from "./wait/kinds/index.ts";
import { requestShownShape } from "./wait/kinds/request-kind.ts";

/** How a turn's leg ended without failing, as its `done` event says; `cancelled` when its signal was aborted. */
export const TurnStatusSchema = z.enum(["completed", "awaiting_approval", "awaiting_input", "awaiting_human", "cancelled"]);
/** How a turn's leg ended without failing: its `done` event's `status`. */
export type TurnStatus = z.infer<typeof TurnStatusSchema>;

/** How a turn's leg ended: what the host records for the turn. */
export type TurnOutcome = { status: TurnStatus } | { status: "failed"; code: string };

/*
 * The schemas are built on first use (`z.lazy`, or a function): the runtime never parses its own
 * events, and what reads them (the OpenAPI document, clients, the test suites) is rare, so an
 * isolate's start does not pay for them (issue 67).
 */
const usageSchema = () => exactly<Usage>()(z.strictObject({ inputTokens: z.number(), outputTokens: z.number() }));
export const usageTotalsSchema = () =>
  exactly<UsageTotals>()(
    z.strictObject({ modelCalls: z.number(), inputTokens: z.number(), outputTokens: z.number(), toolCalls: z.number() }),
  );
const operatorIdentitySchema = () => exactly<OperatorIdentity>()(z.strictObject({ id: z.string(), name: z.string().optional() }));

/** The change-of-hands records' object schemas, which the `handoff` event extends: built once, on first use. */
let builtRecords: ReturnType<typeof buildRecords> | undefined;
const records = () => (builtRecords ??= buildRecords());
function buildRecords() {
  const changeOfHands = { from: z.string(), to: z.string() };
  return {
    transfer: z.strictObject({
      kind: z.literal("transfer"),
      ...changeOfHands,
      toolCallId: z.string(),
      reason: z.string().optional(),
      input: z.record(z.string(), z.unknown()).optional(),
      stepIndex: z.number(),
      router: z.strictObject({ name: z.string(), confidence: z.number() }).optional(),
    }),
    onCallReturn: z.strictObject({
      kind: z.literal("return"),
      ...changeOfHands,
      stepIndex: z.number(),
      mode: z.literal("on-call"),
      toolCallId: z.string(),
      reason: z.string(),
    }),
    onAnswerReturn: z.strictObject({
      kind: z.literal("return"),
      ...changeOfHands,
      stepIndex: z.number(),
      mode: z.literal("on-answer"),
      openedBy: z.string(),
    }),
    handBack: z.strictObject({
      kind: z.literal("hand-back"),
      ...changeOfHands,
      note: z.string().optional(),
      by: operatorIdentitySchema().optional(),
    }),
  };
}

/** A transfer (a model's, or a router's with its name and confidence). */
export const TransferRecordSchema = exactly<TransferRecord>()(z.lazy(() => records().transfer));
/** A return on call (`return_to_<caller>`, its summary the `reason`) or on answer (`openedBy`: the transfer that opened its frame). */
export const ReturnRecordSchema = exactly<ReturnRecord>()(z.lazy(() => z.union([records().onCallReturn, records().onAnswerReturn])));
/** A person or a remote agent gave the conversation back, with a note; `by`: the signed-in operator who did. */
export const HandBackRecordSchema = exactly<HandBackRecord>()(z.lazy(() => records().handBack));
/** Any change of hands, as stored and as the `handoff` event carries it (less its `type`). */
export const HandoffRecordSchema = exactly<HandoffRecord>()(
  z.lazy(() => {
    const { transfer, onCallReturn, onAnswerReturn, handBack } = records();
    return z.union([transfer, onCallReturn, onAnswerReturn, handBack]);
  }),
);

/**
 * A leg begins. `resumed`: a suspended turn goes on after decisions; `scheduled`: a turn the host's
 * schedule started; `demo`: an offline model answers.
 */
export interface RunStartEvent {
  type: "run-start";
  conversationId: string;
  agent: string;
  model: string;
  demo?: boolean;
  resumed?: boolean;
  scheduled?: boolean;
}

/** A step begins. `remote`: the step is a call to a remote A2A agent at that URL, not a model call. */
export interface StepStartEvent {
  type: "step-start";
  stepIndex: number;
  agent: string;
  remote?: string;
}

/** Text of the holder's answer, as it is produced. */
export interface TextDeltaEvent {
  type: "text-delta";
  delta: string;
}

/** A call the model made. `plan`: what the loop makes of it, decided before any tool runs (a transfer is no tool). */
export interface ToolCallEvent {
  type: "tool-call";
  toolCallId: string;
  name: string;
  args: unknown;
  plan: CallPlan;
  /** What the call does, in words for the user (its tool's `describe`): shown in place of `name`, which stays for the details. */
  said?: string;
}

/** A call's answer. `denied`: a person declined the call, which never ran (its result says why). */
export interface ToolResultEvent {
  type: "tool-result";
  toolCallId: string;
  name: string;
  result: unknown;
  isError: boolean;
  denied?: true;
  /** Files the call saved, by reference (read at the host's file route). */
  files?: FileRef[];
}

/** A change of hands of any kind: its record (`kind`: transfer, return, hand-back). */
export type HandoffEvent = PublicHandoffRecord & { type: "handoff" };

/** A change of hands as every reader is told it: a hand-back's note is for the agent that takes over, never in an event. */
export type PublicHandoffRecord = Exclude<HandoffRecord, HandBackRecord> | Omit<HandBackRecord, "note">;

/** What every request to the user names: the call that waits, whose it is, and until when (`expiresAt`: declined as `expired` then). */
export interface RequestEventFields {
  toolCallId: string;
  name: string;
  args: unknown;
  agent: string;
  expiresAt?: string;
  /** A delegated agent's call: the path of delegating calls, and the call's own id (`toolCallId` is the outermost call's). */
  delegated?: DelegatedCall;
}

/** A call waits for a decision. */
export interface ApprovalRequiredEvent extends RequestEventFields {
  type: "approval-required";
  /** What the call asks, in words for the user (the tool's `approvalMessage`). */
  message?: string;
}

/** A delegated agent's call that waits for the user: the delegating calls (outermost first) and its own id. */
export interface DelegatedCall {
  path: string[];
  toolCallId: string;
}

/** What every `input-required` event names: the call that waits, whose it is, and until when. */
export interface InputRequiredBase extends RequestEventFields {
  type: "input-required";
}

/**
 * A call waits for the user's input (approvals have `approval-required`), as its kind shows it (runtime/wait/kinds/): a
 * tool's question or choice (`ctx.ask`), a client tool the user's client runs, an MCP server's elicitation (a form, or an
 * https URL to open).
 */
export type InputRequiredEvent =
  Exclude<UserRequest, ApprovalRequest> extends infer R
    ? R extends UserRequest
      ? InputRequiredBase & Omit<R, "earlier" | "recorded" | keyof RequestEventFields>
      : never
    : never;

/**
 * An event of a delegated agent's run (`Agent.asTool`), nested under the calls that delegated it: `path` is their ids, outermost
 * first (a child of a child has two), and `agent` the delegated agent that holds the child run when the event came.
 */
export interface DelegatedEvent {
  type: "delegated";
  path: string[];
  agent: string;
  event: RunEvent;
}

/** A step ended: the model's finish reason and what the step spent. */
export interface StepFinishEvent {
  type: "step-finish";
  stepIndex: number;
  finishReason: string;
  usage?: Usage;
}

/** A guardrail blocked the turn's input, its final text, or one tool call (`toolCallId`). */
export interface GuardrailEvent {
  type: "guardrail";
  kind: "input" | "output" | "tool";
  agent: string;
  reason: string;
  toolCallId?: string;
}

/** Older turns were replaced by a summary in what the model is sent (the stored history keeps them). */
export interface CompactionEvent {
  type: "compaction";
  agent: string;
  replaced: number;
  kept: number;
  summaryChars: number;
}

/**
 * The signed-in user's memory in the turn: `recalled` into what `agent` was given before it answered (outside the stored
 * history), or `written` by it (a tool's `ctx.memory.remember`).
 */
export interface MemoryEvent {
  type: "memory";
  action: "recalled" | "written";
  agent: string;
  memories: Array<Pick<Memory, "id" | "text" | "type" | "key">>;
}

/** Something went wrong that the turn survived (a remote agent failed, a hook threw after its commit). */
export interface WarningEvent {
  type: "warning";
  code: string;
  message: string;
}

/** A person's message to the user while a person holds the conversation: `operator`, the name shown; `by`, the signed-in operator. */
export interface OperatorMessageEvent {
  type: "operator-message";
  agent: string;
  text: string;
  operator?: string;
  by?: OperatorIdentity;
}

/** The leg's end: `handoffs`, this turn's; `handoffCount`, the conversation's transfers; `usage`, what this turn spent so far. */
export interface DoneEvent {
  type: "done";
  status: TurnStatus;
  text: string;
  agent: string;
  handoffs: HandoffRecord[];
  handoffCount: number;
  usage?: UsageTotals;
}

/** The turn failed. `status`: the provider's HTTP status, when a model call failed with one. */
export interface ErrorEvent {
  type: "error";
  code: string;
  message: string;
  status?: number;
}

/**
 * The events of a turn, streamed as they happen: a `run-start`, steps with their text, calls,
 * results and handoffs, and one `done` or `error` at the end.
 */
export type RunEvent =
  | RunStartEvent
  | StepStartEvent
  | TextDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | HandoffEvent
  | ApprovalRequiredEvent
  | InputRequiredEvent
  | DelegatedEvent
  | StepFinishEvent
  | GuardrailEvent
  | CompactionEvent
  | MemoryEvent
  | WarningEvent
  | OperatorMessageEvent
  | DoneEvent
  | ErrorEvent;

/** Every kind that waits for input, each shape it shows beside the base fields (built from the kinds, so a new one is in it). */
function inputRequiredSchema(): z.ZodType<InputRequiredEvent> {
  const base = { type: z.literal("input-required"), ...requestShownShape() };
  const shapes = requestKinds()
    .filter((kind) => kind.waits === "input")
    .flatMap((kind) => kind.shownSchemas().map((shown) => z.strictObject({ ...base, kind: z.literal(kind.kind), ...shown })));
  return z.union(shapes) as z.ZodType as z.ZodType<InputRequiredEvent>;
}

/** A file's reference, as events, views and uploads give it (the bytes are the host's to serve). */
export const FileRefSchema = exactly<FileRef>()(
  z.lazy(() =>
    z.strictObject({
      id: z.string(),
      mediaType: z.string(),
      size: z.number().int(),
      name: z.string(),
      sha256: z.string().describe("The bytes' SHA-256, hex"),
    }),
  ),
);

function handoffEventSchema() {
  const { transfer, onCallReturn, onAnswerReturn, handBack } = records();
  const handoffEvent = { type: z.literal("handoff") };
  return exactly<HandoffEvent>()(
    z.union([
      transfer.extend(handoffEvent),
      onCallReturn.extend(handoffEvent),
      onAnswerReturn.extend(handoffEvent),
      handBack.omit({ note: true }).extend(handoffEvent),
    ]),
  );
}

/** Each event's schema, by its `type`: a type added to the union has a schema here, or nothing compiles. */
export const EVENT_SCHEMAS: { readonly [T in RunEvent["type"]]: z.ZodType<Extract<RunEvent, { type: T }>> } = {
  "run-start": z.lazy(() =>
    exactly<RunStartEvent>()(
      z.strictObject({
        type: z.literal("run-start"),
        conversationId: z.string(),
        agent: z.string(),
        model: z.string(),
        demo: z.boolean().optional(),
        resumed: z.boolean().optional(),
        scheduled: z.boolean().optional(),
      }),
    ),
  ),
  "step-start": z.lazy(() =>
    exactly<StepStartEvent>()(
      z.strictObject({ type: z.literal("step-start"), stepIndex: z.number(), agent: z.string(), remote: z.string().optional() }),
    ),
  ),
  "text-delta": z.lazy(() => exactly<TextDeltaEvent>()(z.strictObject({ type: z.literal("text-delta"), delta: z.string() }))),
  "tool-call": z.lazy(() =>
    exactly<ToolCallEvent>()(
      z.strictObject({
        type: z.literal("tool-call"),
        toolCallId: z.string(),
        name: z.string(),
        args: z.unknown(),
        plan: exactly<CallPlan>()(z.enum(["tool", "transfer", "person", "return", "refused-handoff"])),
        said: z.string().optional(),
      }),
    ),
  ),
  "tool-result": z.lazy(() =>
    exactly<ToolResultEvent>()(
      z.strictObject({
        type: z.literal("tool-result"),
        toolCallId: z.string(),
        name: z.string(),
        result: z.unknown(),
        isError: z.boolean(),
        denied: z.literal(true).optional(),
        files: z.array(FileRefSchema).optional(),
      }),
    ),
  ),
  handoff: z.lazy(handoffEventSchema),
  "approval-required": z.lazy(() =>
    exactly<ApprovalRequiredEvent>()(
      z.strictObject({ type: z.literal("approval-required"), ...requestShownShape(), message: z.string().optional() }),
    ),
  ),
  "input-required": z.lazy(inputRequiredSchema),
  // The nested event is any event but another nesting: a grandchild's comes up whole, with its longer path.
  delegated: z.lazy(
    () =>
      z.strictObject({
        type: z.literal("delegated"),
        path: z.array(z.string()).min(1),
        agent: z.string(),
        event: RunEventSchema,
      }) as unknown as z.ZodType<DelegatedEvent>,
  ),
  "step-finish": z.lazy(() =>
    exactly<StepFinishEvent>()(
      z.strictObject({
        type: z.literal("step-finish"),
        stepIndex: z.number(),
        finishReason: z.string(),
        usage: usageSchema().optional(),
      }),
    ),
  ),
  guardrail: z.lazy(() =>
    exactly<GuardrailEvent>()(
      z.strictObject({
        type: z.literal("guardrail"),
        kind: z.enum(["input", "output", "tool"]),
        agent: z.string(),
        reason: z.string(),
        toolCallId: z.string().optional(),
      }),
    ),
  ),
  compaction: z.lazy(() =>
    exactly<CompactionEvent>()(
      z.strictObject({
        type: z.literal("compaction"),
        agent: z.string(),
        replaced: z.number(),
        kept: z.number(),
        summaryChars: z.number(),
      }),
    ),
  ),
  memory: z.lazy(() =>
    exactly<MemoryEvent>()(
      z.strictObject({
        type: z.literal("memory"),
        action: z.enum(["recalled", "written"]),
        agent: z.string(),
        memories: z.array(MemorySchema.pick({ id: true, text: true, type: true, key: true })),
      }),
    ),
  ),
  warning: z.lazy(() => exactly<WarningEvent>()(z.strictObject({ type: z.literal("warning"), code: z.string(), message: z.string() }))),
  "operator-message": z.lazy(() =>
    exactly<OperatorMessageEvent>()(
      z.strictObject({
        type: z.literal("operator-message"),
        agent: z.string(),
        text: z.string(),
        operator: z.string().optional(),
        by: operatorIdentitySchema().optional(),
      }),
    ),
  ),
  done: z.lazy(() =>
    exactly<DoneEvent>()(
      z.strictObject({
        type: z.literal("done"),
        status: TurnStatusSchema,
        text: z.string(),
        agent: z.string(),
        handoffs: z.array(HandoffRecordSchema),
        handoffCount: z.number(),
        usage: usageTotalsSchema().optional(),
      }),
    ),
  ),
  error: z.lazy(() =>
    exactly<ErrorEvent>()(
      z.strictObject({ type: z.literal("error"), code: z.string(), message: z.string(), status: z.number().optional() }),
    ),
  ),
};

/** Any event of a turn: the union of `EVENT_SCHEMAS`. */
export const RunEventSchema: z.ZodType<RunEvent> = z.lazy(() => z.union(Object.values(EVENT_SCHEMAS)));
