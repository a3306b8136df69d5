import type { Env } from "../env.ts";
import type { ApprovalDecision } from "../runtime/index.ts";
import type { Caller, Conversation } from "../session/index.ts";
import type { StreamFormat } from "../wire/index.ts";
import type { Access } from "./auth.ts";

type Result<K extends keyof Conversation> = Conversation[K] extends (...args: never[]) => Promise<infer R> ? R : never;

/**
 * Typed calls to a conversation's Durable Object, as the caller: a conversation token's grant
 * goes along, for the Durable Object to check. The RPC stub types values that hold `unknown`
 * (tool arguments and results) as unserializable; they are plain JSON, so the class's own
 * return types are the truth.
 */
export function sessionClient(env: Env, conversationId: string, access: Access) {
  const stub = env.CONVERSATIONS.getByName(conversationId) as unknown as Conversation;
  const caller: Caller = access.kind === "conversation" ? { conversationId, grant: access.grant } : { conversationId };
  return {
    create: (): Promise<Result<"create">> => stub.create(caller),
    issueGrant: (rotate: boolean): Promise<Result<"issueGrant">> => stub.issueGrant(caller, rotate),
    sendMessage: (message: string, format: StreamFormat): Promise<Result<"sendMessage">> => stub.sendMessage(caller, message, format),
    decide: (decisions: ApprovalDecision[], format: StreamFormat): Promise<Result<"decide">> => stub.decide(caller, decisions, format),
    events: (afterId: number, format: StreamFormat): Promise<Result<"events">> => stub.events(caller, afterId, format),
    view: (): Promise<Result<"getView">> => stub.getView(caller),
    erase: (): Promise<Result<"erase">> => stub.erase(caller),
  };
}
