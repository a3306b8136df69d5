import type { Context, Hono } from "hono";
import { readConfig } from "../config.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse } from "./errors.ts";
import { conversationId, readJson, sessionError } from "./request.ts";
import { CreateConversationBody, TokenBody } from "./schemas.ts";
import { sessionClient } from "./session-client.ts";
import { mintToken } from "./tokens.ts";

/** Creating conversations and issuing their tokens: the master key's business, never a token's. */
export function registerTokenRoutes(app: Hono<AppEnv>): void {
  app.post("/v1/conversations", async (c) => {
    if (c.get("access").kind === "conversation") return errorResponse(c, "forbidden", "Creating a conversation needs the API key, not a conversation token.");
    if (c.req.header("content-length") !== "0" && c.req.raw.body) {
      const body = await readJson(c, CreateConversationBody);
      if (body instanceof Response) return body;
    }
    const id = crypto.randomUUID();
    const created = await sessionClient(c.env, id, c.get("access")).create();
    if (!created.ok) return sessionError(c, created.error);
    return c.json({ id, token: await tokenFor(c, id, created.value.grant), activeAgent: created.value.activeAgent }, 201);
  });

  // A new token for an existing conversation (a user coming back); `rotate` revokes the old ones.
  app.post("/v1/conversations/:id/tokens", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    if (c.get("access").kind === "conversation") return errorResponse(c, "forbidden", "Issuing tokens needs the API key, not a conversation token.");
    let rotate = false;
    if (c.req.header("content-length") !== "0" && c.req.raw.body) {
      const body = await readJson(c, TokenBody);
      if (body instanceof Response) return body;
      rotate = body.rotate ?? false;
    }
    const issued = await sessionClient(c.env, id, c.get("access")).issueGrant(rotate);
    if (!issued.ok) return sessionError(c, issued.error);
    return c.json({ id, token: await tokenFor(c, id, issued.value.grant) }, 201);
  });
}

/** A conversation token, when tokens are signed here (null in anonymous use). */
async function tokenFor(c: Context<AppEnv>, id: string, grant: string): Promise<string | null> {
  const config = readConfig(c.env);
  const secret = config.SESSION_SECRET ?? config.API_KEY;
  return secret ? mintToken(secret, id, grant) : null;
}

