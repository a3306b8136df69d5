import type { Env } from "../env.ts";
import type { ApprovalDecision } from "../runtime/index.ts";
import type { Caller, Conversation, ForkSnapshot, PageQuery } from "../session/index.ts";
import type { StreamFormat } from "../wire/index.ts";
import type { Access } from "./auth.ts";

type Result<K extends keyof Conversation> = Conversation[K] extends (...args: never[]) => Promise<infer R> ? R : never;

export interface SessionClient {
  create(): Promise<Result<"create">>;
  issueGrant(rotate: boolean): Promise<Result<"issueGrant">>;
  sendMessage(message: string, format: StreamFormat): Promise<Result<"sendMessage">>;
  decide(decisions: ApprovalDecision[], format: StreamFormat): Promise<Result<"decide">>;
  events(afterId: number, format: StreamFormat, follow?: boolean): Promise<Result<"events">>;
  operatorMessage(text: string, operator?: string): Promise<Result<"operatorMessage">>;
  operatorHandBack(to: string, note: string): Promise<Result<"operatorHandBack">>;
  view(query?: PageQuery): Promise<Result<"getView">>;
  erase(): Promise<Result<"erase">>;
  cancel(): Promise<Result<"cancel">>;
  uiMessages(query?: PageQuery): Promise<Result<"uiMessages">>;
  retry(message: string | undefined, format: StreamFormat): Promise<Result<"retry">>;
  forkSnapshot(afterTurn: number): Promise<Result<"forkSnapshot">>;
  turns(): Promise<Result<"turns">>;
  turnTrace(turn: number): Promise<Result<"turnTrace">>;
  importFork(snapshot: ForkSnapshot): Promise<Result<"importFork">>;
}

/**
 * Typed calls to a conversation's Durable Object, as the caller: a conversation token's grant
 * goes along, for the Durable Object to check. The RPC stub types values that hold `unknown`
 * (tool arguments and results) as unserializable; they are plain JSON, so the class's own
 * return types are the truth.
 */
export function sessionClient(env: Env, conversationId: string, access: Access, traceparent?: string): SessionClient {
  const stub = env.CONVERSATIONS.getByName(conversationId) as unknown as Conversation;
  const caller: Caller = {
    conversationId,
    ...(access.kind === "conversation" ? { grant: access.grant } : {}),
    ...(traceparent ? { traceparent } : {}),
  };
  return {
    create: () => stub.create(caller),
    issueGrant: (rotate) => stub.issueGrant(caller, rotate),
    sendMessage: (message, format) => stub.sendMessage(caller, message, format),
    decide: (decisions, format) => stub.decide(caller, decisions, format),
    events: (afterId, format, follow = false) => stub.events(caller, afterId, format, follow),
    operatorMessage: (text, operator) => stub.operatorMessage(caller, text, operator),
    operatorHandBack: (to, note) => stub.operatorHandBack(caller, to, note),
    view: (query = {}) => stub.getView(caller, query),
    erase: () => stub.erase(caller),
    cancel: () => stub.cancel(caller),
    uiMessages: (query = {}) => stub.uiMessages(caller, query),
    retry: (message, format) => stub.retry(caller, message, format),
    forkSnapshot: (afterTurn) => stub.forkSnapshot(caller, afterTurn),
    turns: () => stub.turns(caller),
    turnTrace: (turn) => stub.turnTrace(caller, turn),
    importFork: (snapshot) => stub.importFork(caller, snapshot),
  };
}
