import type { Env } from "../env.ts";
import type { Access } from "./auth.ts";
import type { ConversationClient } from "./conversation-client.ts";

/** The Hono environment of every route: the Worker's bindings and who is calling. */
export type AppEnv = { Bindings: Env; Variables: { access: Access } };

/** Routes under /v1/conversations/:id also have the validated id and the conversation's client. */
export type ConversationEnv = { Bindings: Env; Variables: { access: Access; conversationId: string; client: ConversationClient } };
