import type { Context, Hono } from "hono";
import { readConfig } from "../config.ts";
import type { AppEnv, ConversationEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { expectOk, readJson, readOptionalJson, readQuery } from "./request.ts";
import { CreateConversationBody, ForkBody, InboxQueryParams, TokenBody } from "./schemas.ts";
import { inboxOf } from "../inbox/inbox.ts";
import { conversationClient } from "./conversation-client.ts";
import { mintToken } from "./tokens.ts";

/** Creating conversations and issuing their tokens: the master key's or their owner's business, never a token's. */
export function registerConversationCreate(app: Hono<AppEnv>): void {
  // A signed-in user's own conversations, from their inbox.
  app.get("/v1/conversations", async (c) => {
    const access = c.get("access");
    if (access.kind !== "user") throw new HttpError("forbidden", "Listing conversations is for a signed-in user: send your sign-in token.");
    const { archived, ...query } = readQuery(c, InboxQueryParams);
    const inbox = await inboxOf(c.env, access.user.id);
    if (!inbox)
      throw new HttpError(
        "inbox_not_configured",
        "This Worker binds no inboxes: add the INBOXES Durable Object binding (class Inbox) to wrangler.toml.",
      );
    return c.json(await inbox.list({ ...query, archived: archived === "true" }));
  });
  app.post("/v1/conversations", async (c) => {
    if (c.get("access").kind === "conversation")
      throw new HttpError("forbidden", "Creating a conversation needs the API key, not a conversation token.");
    await readOptionalJson(c, CreateConversationBody);
    const id = crypto.randomUUID();
    const created = await expectOk(conversationClient(c.env, id, c.get("access")).create());
    return c.json({ id, token: await tokenFor(c, id, created.grant), activeAgent: created.activeAgent }, 201);
  });
}

/** A new token for an existing conversation (a user coming back); `rotate` revokes the old ones. */
export function registerTokenIssue(app: Hono<ConversationEnv>): void {
  app.post("/tokens", async (c) => {
    if (c.get("access").kind === "conversation")
      throw new HttpError("forbidden", "Issuing tokens needs the API key, not a conversation token.");
    const body = await readOptionalJson(c, TokenBody);
    const issued = await expectOk(c.var.client.issueGrant(body?.rotate ?? false));
    return c.json({ id: c.var.conversationId, token: await tokenFor(c, c.var.conversationId, issued.grant) }, 201);
  });
}

/**
 * A fork: a new conversation (new id and token) whose history, holder, counters and context are
 * the original's after `afterTurn`. A token of the original may fork it; the original is untouched.
 */
export function registerFork(app: Hono<ConversationEnv>): void {
  app.post("/fork", async (c) => {
    const { afterTurn } = await readJson(c, ForkBody);
    const id = crypto.randomUUID();
    const snapshot = await expectOk(c.var.client.forkSnapshot(afterTurn, id));
    // The new conversation is created by the Worker itself: the requester's token belongs to the original. A signed-in user owns the fork.
    const access = c.get("access");
    const created = await expectOk(
      conversationClient(c.env, id, access.kind === "user" ? access : { kind: "master" }).importFork(snapshot),
    );
    return c.json(
      {
        id,
        token: await tokenFor(c, id, created.grant),
        activeAgent: created.activeAgent,
        forkedFrom: { id: c.var.conversationId, afterTurn },
      },
      201,
    );
  });
}

/** A conversation token, when tokens are signed here (null in anonymous use). */
async function tokenFor(c: Context<AppEnv> | Context<ConversationEnv>, id: string, grant: string): Promise<string | null> {
  const config = readConfig(c.env);
  const secret = config.SESSION_SECRET ?? config.API_KEY;
  return secret ? mintToken(secret, id, grant) : null;
}
