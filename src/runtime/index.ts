/**
 * @module
 * The handoff run loop: agents, handoffs, the step loop and its events. Pure TypeScript with no
 * Cloudflare, Hono or OpenAI imports; hosts plug in through the ports (Model, TurnStore).
 */
export { Agent, type AgentConfig, type AgentContext, type Handoff, humanAgent } from "./agent.ts";
export { handoff, type HandoffEdge, type HandoffScope } from "./handoff/handoff.ts";
export type { CallerFrame, HandoffInfo, HandoffOptions, HandoffRecord, HandoffState, ReturnMode } from "./handoff/types.ts";
export { RETURN_PREFIX, returnToolName } from "./handoff/returns.ts";
export { NAMED_TRANSFER_TOOL, SINGLE_TRANSFER_TOOL, type TransferStyle } from "./handoff/transfer-tools.ts";
export { sanitizeAgentName, transferToolNames, TRANSFER_PREFIX } from "./handoff/tool-names.ts";
export { RuntimeError, toRuntimeError, type RuntimeErrorCode } from "./errors.ts";
export type { RunEvent, TurnOutcome, TurnStatus } from "./events.ts";
export { DEFAULT_LIMITS, type Limits } from "./limits.ts";
export {
  findHistoryProblem,
  type AssistantMessage,
  type Message,
  type SystemMessage,
  type ToolCall,
  type ToolMessage,
  type UserMessage,
} from "./messages.ts";
export { Network, type AgentToolset, type NetworkOptions } from "./network.ts";
export {
  mcpHeaders,
  mcpResultValue,
  mcpToolName,
  mcpToolOffered,
  type McpApproval,
  type McpCallResult,
  type McpContent,
  type McpHeaders,
  type McpHostEnv,
  type McpPort,
  type McpServerConfig,
  type McpToolInfo,
} from "./mcp.ts";
export type { Model, ModelEvent, ModelRequest, ModelSettings } from "./model-port.ts";
export { applyCommit, type CommittedState, type StepCommit, type TurnStore } from "./store-port.ts";
export { runTurn, runTurnItems } from "./run-loop.ts";
export type { RunItemsOptions, RunTurnOptions, TurnInput, TurnItem } from "./run-options.ts";
export {
  denialMessage,
  INTERRUPTED_CALL,
  settleInterrupted,
  type ApprovalDecision,
  type PendingApproval,
  type Suspension,
} from "./suspension.ts";
export { tool, type DelegateAgent, type Tool, type ToolContext, type ToolSpec } from "./tool.ts";
export { addUsage, NO_USAGE, type Usage, type UsageTotals } from "./usage.ts";
export type { BudgetLimits, Budgets } from "./budgets.ts";
export { compactedView, estimateTokens, type Compaction, type CompactionOptions } from "./compaction.ts";
export type { Guardrail, GuardrailInput, GuardrailVerdict, ToolCallInput, ToolGuardrail } from "./guardrails.ts";
export { MIN_SECRET_LENGTH, REDACTED, Redactor, StreamingRedaction } from "./redact.ts";
