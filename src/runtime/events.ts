/**
 * The events of a turn: one flat union keyed on `type`, plain JSON so they cross any wire. Each
 * event is a zod schema and its type follows from it, so what a client can read of the stream (the
 * OpenAPI document's components, built from these) is what the code sends; the test suites check
 * every event they receive against its schema.
 */
import * as z from "zod";

/** How a turn's leg ended without failing, as its `done` event says; `cancelled` when its signal was aborted. */
export const TurnStatusSchema = z.enum(["completed", "awaiting_approval", "awaiting_human", "cancelled"]);
/** How a turn's leg ended without failing: its `done` event's `status`. */
export type TurnStatus = z.infer<typeof TurnStatusSchema>;

/** How a turn's leg ended: what the host records for the turn. */
export type TurnOutcome = { status: TurnStatus } | { status: "failed"; code: string };

const UsageSchema = z.strictObject({ inputTokens: z.number(), outputTokens: z.number() });
const UsageTotalsSchema = z.strictObject({
  modelCalls: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  toolCalls: z.number(),
});
const OperatorIdentitySchema = z.strictObject({ id: z.string(), name: z.string().optional() });
const CallPlanSchema = z.enum(["tool", "transfer", "person", "return", "refused-handoff"]);
const changeOfHands = { from: z.string(), to: z.string() };

/** A transfer (a model's, or a router's with its name and confidence): the target holds the conversation from the next step. */
export const TransferRecordSchema = z.strictObject({
  kind: z.literal("transfer"),
  ...changeOfHands,
  toolCallId: z.string(),
  reason: z.string().optional(),
  input: z.record(z.string(), z.unknown()).optional(),
  stepIndex: z.number(),
  router: z.strictObject({ name: z.string(), confidence: z.number() }).optional(),
});
/** A return on call (`return_to_<caller>`, its summary the `reason`) or on answer (`openedBy`: the transfer that opened its frame). */
export const ReturnRecordSchemas = [
  z.strictObject({
    kind: z.literal("return"),
    ...changeOfHands,
    stepIndex: z.number(),
    mode: z.literal("on-call"),
    toolCallId: z.string(),
    reason: z.string(),
  }),
  z.strictObject({
    kind: z.literal("return"),
    ...changeOfHands,
    stepIndex: z.number(),
    mode: z.literal("on-answer"),
    openedBy: z.string(),
  }),
] as const;
/** A person or a remote agent gave the conversation back, with a note; `by`: the signed-in operator who did. */
export const HandBackRecordSchema = z.strictObject({
  kind: z.literal("hand-back"),
  ...changeOfHands,
  note: z.string().optional(),
  by: OperatorIdentitySchema.optional(),
});
/** Any change of hands, as stored and as the `handoff` event carries it (less its `type`). */
export const HandoffRecordSchema = z.union([TransferRecordSchema, ...ReturnRecordSchemas, HandBackRecordSchema]);

const handoffEvent = { type: z.literal("handoff") };

/** Each event's schema, by its `type`: a type added to the union has a schema here, or nothing compiles. */
export const EVENT_SCHEMAS = {
  /**
   * `resumed`: a suspended turn goes on after decisions; `scheduled`: a turn the host's schedule
   * started; `demo`: an offline model answers.
   */
  "run-start": z.strictObject({
    type: z.literal("run-start"),
    conversationId: z.string(),
    agent: z.string(),
    model: z.string(),
    demo: z.boolean().optional(),
    resumed: z.boolean().optional(),
    scheduled: z.boolean().optional(),
  }),
  /** `remote`: the step is a call to a remote A2A agent at that URL, not a model call. */
  "step-start": z.strictObject({ type: z.literal("step-start"), stepIndex: z.number(), agent: z.string(), remote: z.string().optional() }),
  "text-delta": z.strictObject({ type: z.literal("text-delta"), delta: z.string() }),
  /** `plan`: what the loop makes of the call, decided before any tool runs (a transfer is no tool). */
  "tool-call": z.strictObject({
    type: z.literal("tool-call"),
    toolCallId: z.string(),
    name: z.string(),
    args: z.unknown(),
    plan: CallPlanSchema,
  }),
  /** `denied`: a person declined the call, which never ran (its result says why). */
  "tool-result": z.strictObject({
    type: z.literal("tool-result"),
    toolCallId: z.string(),
    name: z.string(),
    result: z.unknown(),
    isError: z.boolean(),
    denied: z.literal(true).optional(),
  }),
  /** A change of hands of any kind: its record (`kind`: transfer, return, hand-back). */
  handoff: z.union([
    TransferRecordSchema.extend(handoffEvent),
    ReturnRecordSchemas[0].extend(handoffEvent),
    ReturnRecordSchemas[1].extend(handoffEvent),
    HandBackRecordSchema.extend(handoffEvent),
  ]),
  /** `expiresAt`: when an undecided call is declined with reason `expired`. */
  "approval-required": z.strictObject({
    type: z.literal("approval-required"),
    toolCallId: z.string(),
    name: z.string(),
    args: z.unknown(),
    agent: z.string(),
    expiresAt: z.string().optional(),
  }),
  "step-finish": z.strictObject({
    type: z.literal("step-finish"),
    stepIndex: z.number(),
    finishReason: z.string(),
    usage: UsageSchema.optional(),
  }),
  /** A guardrail blocked the turn's input, its final text, or one tool call (`toolCallId`). */
  guardrail: z.strictObject({
    type: z.literal("guardrail"),
    kind: z.enum(["input", "output", "tool"]),
    agent: z.string(),
    reason: z.string(),
    toolCallId: z.string().optional(),
  }),
  /** Older turns were replaced by a summary in what the model is sent (the stored history keeps them). */
  compaction: z.strictObject({
    type: z.literal("compaction"),
    agent: z.string(),
    replaced: z.number(),
    kept: z.number(),
    summaryChars: z.number(),
  }),
  warning: z.strictObject({ type: z.literal("warning"), code: z.string(), message: z.string() }),
  /** A person's message to the user while a person holds the conversation: `operator`, the name shown; `by`, the signed-in operator. */
  "operator-message": z.strictObject({
    type: z.literal("operator-message"),
    agent: z.string(),
    text: z.string(),
    operator: z.string().optional(),
    by: OperatorIdentitySchema.optional(),
  }),
  /** The leg's end: `handoffs`, this turn's; `handoffCount`, the conversation's transfers; `usage`, what this turn spent so far. */
  done: z.strictObject({
    type: z.literal("done"),
    status: TurnStatusSchema,
    text: z.string(),
    agent: z.string(),
    handoffs: z.array(HandoffRecordSchema),
    handoffCount: z.number(),
    usage: UsageTotalsSchema.optional(),
  }),
  /** `status`: the provider's HTTP status, when a model call failed with one. */
  error: z.strictObject({ type: z.literal("error"), code: z.string(), message: z.string(), status: z.number().optional() }),
} as const;

/** Any event of a turn. */
export const RunEventSchema = z.union([
  EVENT_SCHEMAS["run-start"],
  EVENT_SCHEMAS["step-start"],
  EVENT_SCHEMAS["text-delta"],
  EVENT_SCHEMAS["tool-call"],
  EVENT_SCHEMAS["tool-result"],
  EVENT_SCHEMAS.handoff,
  EVENT_SCHEMAS["approval-required"],
  EVENT_SCHEMAS["step-finish"],
  EVENT_SCHEMAS.guardrail,
  EVENT_SCHEMAS.compaction,
  EVENT_SCHEMAS.warning,
  EVENT_SCHEMAS["operator-message"],
  EVENT_SCHEMAS.done,
  EVENT_SCHEMAS.error,
]);

/**
 * The events of a turn, streamed as they happen: a `run-start`, steps with their text, calls,
 * results and handoffs, and one `done` or `error` at the end.
 */
export type RunEvent = { [K in keyof typeof EVENT_SCHEMAS]: z.infer<(typeof EVENT_SCHEMAS)[K]> }[keyof typeof EVENT_SCHEMAS];
