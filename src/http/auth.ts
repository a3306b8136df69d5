import type { MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { readConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { errorResponse } from "./errors.ts";
import { CONVERSATION_ID_RULE, ConversationId } from "./schemas.ts";
import { safeEqual, verifyToken } from "./tokens.ts";

export type Access = { kind: "master" } | { kind: "conversation"; conversationId: string; grant: string } | { kind: "anonymous" };

type AuthEnv = { Bindings: Env; Variables: { access: Access } };

const CONVERSATION_PATH = /^\/v1\/conversations\/([^/]+)/;

/**
 * Guards /v1/*. Fails closed: with no API_KEY the API answers 503 unless ALLOW_ANONYMOUS=true.
 * The master key opens everything; a conversation token opens its own conversation only.
 */
export function requireAccess(): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const config = readConfig(c.env);
    if (!config.API_KEY) {
      if (!config.ALLOW_ANONYMOUS) {
        return errorResponse(
          c,
          "auth_not_configured",
          "This Worker has no API_KEY configured: set the API_KEY secret (or ALLOW_ANONYMOUS=true for local use).",
        );
      }
      c.set("access", { kind: "anonymous" });
      return next();
    }
    const header = c.req.header("authorization") ?? "";
    const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (!bearer) return unauthorized(c, "Send Authorization: Bearer <API key or conversation token>.");
    if (await safeEqual(bearer, config.API_KEY)) {
      c.set("access", { kind: "master" });
      return next();
    }
    const granted = await verifyToken(config.SESSION_SECRET ?? config.API_KEY, bearer);
    if (!granted) return unauthorized(c, "The bearer token is not valid.");
    // The path within this app: a team may mount it under a prefix of its own Worker.
    const path = c.req.path.slice(basePath(c).replace(/\/$/, "").length);
    // Conversation ids need no decoding (A-Z, a-z, 0-9, _ and -): an escape in one is a malformed id.
    const requested = CONVERSATION_PATH.exec(path)?.[1];
    if (requested !== undefined && !ConversationId.safeParse(requested).success)
      return errorResponse(c, "invalid_conversation_id", CONVERSATION_ID_RULE);
    const conversationScoped = requested !== undefined || path === "/v1/agents" || path === "/v1/openapi.json";
    if (!conversationScoped || (requested !== undefined && requested !== granted.conversationId)) {
      return errorResponse(c, "forbidden", "This conversation token does not grant access to this resource.");
    }
    c.set("access", { kind: "conversation", ...granted });
    return next();
  };
}

function unauthorized(c: Parameters<MiddlewareHandler>[0], message: string): Response {
  const res = errorResponse(c, "unauthorized", message);
  res.headers.set("www-authenticate", 'Bearer realm="handoff-runtime"');
  return res;
}
