import type { Env } from "../env.ts";
import type { Requester, Conversation } from "../conversation/index.ts";
import type { Access } from "./auth.ts";
import { HttpError } from "./errors.ts";

/** The Durable Object's RPC methods: those that take the requester first. */
type ConversationMethod = {
  [K in keyof Conversation]-?: Conversation[K] extends (requester: Requester, ...rest: never[]) => Promise<unknown> ? K : never;
}[keyof Conversation];

type WithoutRequester<F> = F extends (requester: Requester, ...rest: infer A) => infer R ? (...args: A) => R : never;

/** A conversation's Durable Object as the Worker calls it: each of its methods, the requester passed for you. */
export type ConversationClient = { [K in ConversationMethod]: WithoutRequester<Conversation[K]> };

/**
 * Typed calls to a conversation's Durable Object, as the requester: a conversation token's grant
 * goes along, for the Durable Object to check. The class is the one list of its methods; any
 * method called here is the object's, with the requester first. The RPC stub types values that hold
 * `unknown` (tool arguments and results) as unserializable; they are plain JSON, so the class's
 * own types are the truth.
 */
export function conversationClient(env: Env, conversationId: string, access: Access, from?: RequestOrigin): ConversationClient {
  const stub = conversationObject(env, conversationId) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const requester = requesterOf(conversationId, access, from);
  return new Proxy({} as ConversationClient, {
    get: (_target, method) => (typeof method === "string" ? (...args: unknown[]) => stub[method]!(requester, ...args) : undefined),
  });
}

/** A conversation's Durable Object; a Worker that binds none is told which binding to add, not sent a TypeError. */
export function conversationObject(env: Env, conversationId: string): DurableObjectStub<Conversation> {
  // The type says it is bound; a wrangler.toml without it is what this guards.
  const namespace = env.CONVERSATIONS as Env["CONVERSATIONS"] | undefined;
  if (!namespace)
    throw new HttpError(
      "invalid_configuration",
      "This Worker binds no CONVERSATIONS (the Conversation Durable Object, one per conversation): bind it in wrangler.toml.",
    );
  return namespace.getByName(conversationId);
}

/** What a request tells of where it comes from: its W3C `traceparent`, and the client's address (for the per-client limit). */
export interface RequestOrigin {
  traceparent?: string | undefined;
  address?: string | undefined;
}

/** The origin of a Hono request: `traceparent` and `cf-connecting-ip`. */
export function originOf(req: { header(name: string): string | undefined }): RequestOrigin {
  return { traceparent: req.header("traceparent"), address: req.header("cf-connecting-ip") };
}

/** Who the Durable Object is told is asking: the conversation, a token's grant, a signed-in user or operator, and from where. */
export function requesterOf(conversationId: string, access: Access, from: RequestOrigin = {}): Requester {
  return {
    conversationId,
    ...(access.kind === "conversation" ? { grant: access.grant } : {}),
    ...(access.kind === "user" ? { user: access.user.id, identity: identityOf(access.user) } : {}),
    ...(access.kind === "operator" ? { operator: true, ...(access.person ? { identity: access.person } : {}) } : {}),
    ...(from.traceparent ? { traceparent: from.traceparent } : {}),
    ...(from.address ? { address: from.address } : {}),
  };
}

function identityOf(user: { id: string; name?: string }): { id: string; name?: string } {
  return { id: user.id, ...(user.name ? { name: user.name } : {}) };
}
