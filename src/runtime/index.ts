/**
 * @module
 * The handoff run loop: agents, tools and handoffs, the network they form, running a turn, and its
 * events and errors. Pure TypeScript with no Cloudflare, Hono or OpenAI imports; hosts plug in
 * through the ports (Model, TurnStore, McpPort). Every type an exported signature uses is exported
 * here too, grouped by what it is about.
 */

// Agents and the network they form.
export {
  Agent,
  type AgentConfig,
  type AgentContext,
  type Handoff,
  humanAgent,
  memoryAccess,
  type PersonTimeout,
  remoteAgent,
} from "./agent.ts";
export { type AgentToolset, Network, type NetworkOptions } from "./network.ts";
export { type AnnouncedHandoffs, announcedHandoff, NUDGE_NOTE } from "./handoff/announced.ts";
export { TITLE_AGENT } from "./titles.ts";
export { type ExtractedMemory, type Extraction, extractMemories, MEMORY_AGENT, transcriptOf } from "./memory/extraction.ts";

// Handoffs: declared, offered to the model, recorded.
export { handoff, type HandoffEdge, type HandoffScope } from "./handoff/handoff.ts";
export type { TransferStyle } from "./handoff/transfer-tools.ts";
export { keepLatestImages, withoutFiles } from "./handoff/history-filter.ts";
export type {
  HandBackRecord,
  HandoffBase,
  HandoffInfo,
  HandoffKind,
  HandoffOptions,
  HandoffRecord,
  HandoffState,
  OnAnswerReturnRecord,
  OnCallReturnRecord,
  OperatorIdentity,
  ReturnRecord,
  TransferRecord,
} from "./handoff/types.ts";

// Tools, their approvals and guardrails.
export { type DelegateAgent, tool, type Tool, type ToolContext, type ToolFiles, type ToolMemory, type ToolSpec } from "./tools/tool.ts";
export { followUpTool } from "./tools/follow-up-tool.ts";
export { recallTool, rememberTool } from "./tools/memory-tools.ts";
export {
  type Memory,
  type MemoryAccess,
  type MemoryPort,
  MemorySchema,
  type MemorySource,
  MEMORY_TYPES,
  type MemoryType,
  type NewMemory,
  RECALL_DEFAULTS,
  type RecallOptions,
} from "./ports/memory-port.ts";
export type { Guardrail, GuardrailInput, GuardrailVerdict, ToolCallInput, ToolGuardrail } from "./tools/guardrails.ts";
export type {
  AnswerDecision,
  ApprovalDecision,
  ApprovalRequest,
  ChoiceRequest,
  ClientToolRequest,
  Decision,
  ElicitationAnswer,
  ElicitationRequest,
  JsonSchema,
  QuestionRequest,
  RequestBase,
  UserRequest,
  UserRequestKind,
} from "./wait/requests.ts";
/** The reason a request no one answered in time is declined with. */
export { REQUEST_EXPIRED } from "./wait/requests.ts";
export type { Suspension } from "./wait/suspension.ts";
export type { TurnProgress } from "./turn-progress.ts";
export type { AnswerTo, Ask, Choice, Elicitation, Question } from "./wait/asks.ts";

// What a conversation holds, and its history.
export { type ConversationSnapshot, newConversation } from "./conversation-snapshot.ts";
export type { CallerFrame, Holding, ReturnFrame, ReturnMode } from "./holding.ts";
export type { AssistantMessage, CallPlan, FileRef, Message, SystemMessage, ToolCall, ToolMessage, UserMessage } from "./messages.ts";
export type { Compaction, CompactionOptions } from "./compaction.ts";

// Running a turn: its options, items, events and outcome.
export { runTurn, runTurnItems } from "./run-loop.ts";
export type { RunItemsOptions, RunTurnOptions, TurnInput, TurnItem } from "./run-options.ts";
export {
  type ApprovalRequiredEvent,
  type DelegatedCall,
  type DelegatedEvent,
  type InputRequiredBase,
  type RequestEventFields,
  type InputRequiredEvent,
  type CompactionEvent,
  type DoneEvent,
  EVENT_SCHEMAS,
  type ErrorEvent,
  type GuardrailEvent,
  type MemoryEvent,
  HandBackRecordSchema,
  type HandoffEvent,
  type PublicHandoffRecord,
  HandoffRecordSchema,
  type OperatorMessageEvent,
  ReturnRecordSchema,
  type RunEvent,
  RunEventSchema,
  type RunStartEvent,
  type StepFinishEvent,
  type StepStartEvent,
  type TextDeltaEvent,
  type ToolCallEvent,
  type ToolResultEvent,
  TransferRecordSchema,
  type TurnOutcome,
  type TurnStatus,
  TurnStatusSchema,
  type WarningEvent,
} from "./events.ts";
export type { CallsInFlight } from "./calls-in-flight.ts";
export { type ErrorValue, HandoffError, RuntimeError, type RuntimeErrorCode } from "./errors.ts";

// Limits, budgets and what a turn spends.
export { DEFAULT_LIMITS, type Limits } from "./limits.ts";
export type { BudgetLimits, Budgets } from "./budgets.ts";
export type { Usage, UsageTotals } from "./usage.ts";
export type { Duration } from "./duration.ts";

// The ports a host plugs in: the model, the store, the scheduler, MCP servers, remote agents.
export type { Model, ModelEvent, ModelRequest, ModelSettings } from "./ports/model-port.ts";
export type { FilePort, NewFile } from "./ports/files-port.ts";
export type { StepCommit, StoredDelegation, TurnStore } from "./ports/store-port.ts";
export type { BackgroundRequest, FollowUpRequest, ScheduledFollowUp, Scheduler, StartedDelegation } from "./ports/scheduler-port.ts";
export {
  type BackgroundItem,
  type BackgroundOutcome,
  type BackgroundResult,
  type BackgroundResume,
  type BackgroundRun,
  backgroundNote,
  findDelegate,
  recoveredOutcome,
  runInBackground,
} from "./background-delegation.ts";
export {
  type McpApproval,
  type McpCallResult,
  type McpInputRequest,
  type McpInputRequired,
  type McpInputResponses,
  type McpContent,
  type McpHeaders,
  type McpHostEnv,
  type McpPort,
  type McpServerConfig,
  type McpToolInfo,
} from "./ports/mcp-port.ts";
export { mcpToolName } from "./tools/mcp-tools.ts";
export type { HeadersFromEnv, HostEnv } from "./ports/host-env.ts";
export type { RoutedBy, RouteDecision, Router, RouteRequest, RouterOptions } from "./ports/router-port.ts";
export type {
  RemoteAgentConfig,
  RemoteEvent,
  RemoteFetcher,
  RemoteHeaders,
  RemoteInput,
  RemotePort,
  RemoteRequest,
  RemoteState,
} from "./ports/remote-port.ts";
