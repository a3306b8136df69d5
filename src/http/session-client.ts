import type { Env } from "../env.ts";
import type { ApprovalDecision } from "../runtime/index.ts";
import type { Conversation } from "../session/index.ts";

type Result<K extends keyof Conversation> = Conversation[K] extends (...args: never[]) => Promise<infer R> ? R : never;

/**
 * Typed calls to a conversation's Durable Object. The RPC stub types values that hold `unknown`
 * (tool arguments and results) as unserializable; they are plain JSON, so the class's own
 * return types are the truth.
 */
export function sessionClient(env: Env, conversationId: string) {
  const stub = env.CONVERSATIONS.getByName(conversationId) as unknown as Conversation;
  return {
    create: (): Promise<Result<"create">> => stub.create(conversationId),
    sendMessage: (message: string): Promise<Result<"sendMessage">> => stub.sendMessage(conversationId, message),
    decide: (decisions: ApprovalDecision[]): Promise<Result<"decide">> => stub.decide(conversationId, decisions),
    events: (afterId: number): Promise<Result<"events">> => stub.events(conversationId, afterId),
    view: (): Promise<Result<"getView">> => stub.getView(conversationId),
    erase: (): Promise<Result<"erase">> => stub.erase(conversationId),
  };
}
