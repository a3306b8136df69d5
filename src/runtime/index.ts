/**
 * @module
 * The handoff run loop: agents, tools and handoffs, the network they form, running a turn, and its
 * events and errors. Pure TypeScript with no Cloudflare, Hono or OpenAI imports; hosts plug in
 * through the ports (Model, TurnStore, McpPort).
 */
export { Agent, type AgentConfig, type AgentContext, humanAgent, type PersonTimeout } from "./agent.ts";
export { handoff } from "./handoff/handoff.ts";
export { type AnnouncedHandoffs, announcedHandoff, NUDGE_NOTE } from "./handoff/announced.ts";
export type { HandoffOptions, HandoffRecord } from "./handoff/types.ts";
export { RuntimeError, type RuntimeErrorCode } from "./errors.ts";
export type { RunEvent, TurnOutcome, TurnStatus } from "./events.ts";
export { type ConversationSnapshot, newConversation } from "./conversation-snapshot.ts";
export type { Holding } from "./holding.ts";
export { DEFAULT_LIMITS, type Limits } from "./limits.ts";
export type { Message, ToolCall, ToolMessage } from "./messages.ts";
export { Network, type NetworkOptions } from "./network.ts";
export { mcpToolName, type McpPort, type McpServerConfig } from "./ports/mcp.ts";
export type { Model, ModelEvent, ModelRequest } from "./ports/model-port.ts";
export type { StepCommit, TurnStore } from "./ports/store-port.ts";
export { runTurn, runTurnItems } from "./run-loop.ts";
export type { RunTurnOptions, TurnInput } from "./run-options.ts";
export type { FollowUpRequest, ScheduledFollowUp, Scheduler } from "./ports/scheduler-port.ts";
export type { ApprovalDecision, Suspension } from "./suspension.ts";
export { TITLE_AGENT } from "./titles.ts";
export { followUpTool } from "./tools/follow-up-tool.ts";
export type { Duration } from "./duration.ts";
export { tool, type Tool, type ToolContext } from "./tools/tool.ts";
export type { UsageTotals } from "./usage.ts";
export type { Budgets } from "./budgets.ts";
export type { Guardrail, ToolGuardrail } from "./tools/guardrails.ts";
