/**
 * @module
 * The handoff run loop: agents, transfer tools, the step loop and its events. Pure TypeScript with
 * no Cloudflare, Hono or OpenAI imports; hosts plug in through the ports (Model, TurnStore).
 */
export { Agent, handoff, type AgentConfig, type AgentContext, type Handoff, type HandoffOptions, type HandoffState } from "./agent.ts";
export { RuntimeError, toRuntimeError, type RuntimeErrorCode } from "./errors.ts";
export type { HandoffRecord, RunEvent, TurnStatus, Usage } from "./events.ts";
export { DEFAULT_LIMITS, type Limits } from "./limits.ts";
export { findHistoryProblem, type AssistantMessage, type Message, type SystemMessage, type ToolCall, type ToolMessage, type UserMessage } from "./messages.ts";
export { Network, type AgentToolset, type HandoffInfo, type NetworkOptions, type TransferEdge } from "./network.ts";
export { NAMED_TRANSFER_TOOL, SINGLE_TRANSFER_TOOL, type TransferStyle } from "./transfer-tools.ts";
export type { Model, ModelEvent, ModelRequest, ModelSettings, StepCommit, TurnStore } from "./ports.ts";
export { runTurn, type RunTurnOptions, type TurnInput } from "./run-loop.ts";
export { denialMessage, INTERRUPTED_CALL, settleInterrupted, type ApprovalDecision, type PendingApproval, type Suspension } from "./suspension.ts";
export { tool, type Tool, type ToolContext, type ToolSpec } from "./tool.ts";
export { sanitizeAgentName, transferToolNames, TRANSFER_PREFIX } from "./transfer-names.ts";
export { addUsage, NO_USAGE, type BudgetLimits, type Budgets, type UsageTotals } from "./budgets.ts";
export { compactedView, estimateTokens, type Compaction, type CompactionOptions } from "./compaction.ts";
export type { Guardrail, GuardrailInput, GuardrailVerdict, ToolCallInput, ToolGuardrail } from "./guardrails.ts";
export { MIN_SECRET_LENGTH, REDACTED, Redactor, StreamingRedaction } from "./redact.ts";
