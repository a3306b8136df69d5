import type { MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { readConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { errorResponse } from "./errors.ts";
import { conversationIdOf } from "./schemas.ts";
import { safeEqual, verifyToken } from "./tokens.ts";

export type Access =
  | { kind: "master" }
  | { kind: "operator" }
  | { kind: "conversation"; conversationId: string; grant: string }
  | { kind: "anonymous" };

/** The operator API: the desk's list, and a conversation's operator routes. */
const OPERATOR_PATH = /^\/v1\/(operator\/|conversations\/[^/]+\/operator\/)/;

type AuthEnv = { Bindings: Env; Variables: { access: Access } };

const CONVERSATION_PATH = /^\/v1\/conversations\/([^/]+)/;

/**
 * Guards /v1/*. Fails closed: with no API_KEY the API answers 503 unless ALLOW_ANONYMOUS=true.
 * The master key opens everything; a conversation token opens its own conversation only.
 */
export function requireAccess(): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const config = readConfig(c.env);
    const header = c.req.header("authorization") ?? "";
    const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    // The path within this app: a team may mount it under a prefix of its own Worker.
    const path = c.req.path.slice(basePath(c).replace(/\/$/, "").length);
    if (OPERATOR_PATH.test(path)) return operatorAccess(c, bearer, next);
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
    if (!bearer) return unauthorized(c, "Send Authorization: Bearer <API key or conversation token>.");
    if (await safeEqual(bearer, config.API_KEY)) {
      c.set("access", { kind: "master" });
      return next();
    }
    const granted = await verifyToken(config.SESSION_SECRET ?? config.API_KEY, bearer);
    if (!granted) return unauthorized(c, "The bearer token is not valid.");
    // Conversation ids need no decoding (A-Z, a-z, 0-9, _ and -): an escape in one is a malformed id.
    const segment = CONVERSATION_PATH.exec(path)?.[1];
    const requested = segment === undefined ? undefined : conversationIdOf(segment);
    const conversationScoped = requested !== undefined || path === "/v1/agents" || path === "/v1/openapi.json";
    if (!conversationScoped || (requested !== undefined && requested !== granted.conversationId)) {
      return errorResponse(c, "forbidden", "This conversation token does not grant access to this resource.");
    }
    c.set("access", { kind: "conversation", ...granted });
    return next();
  };
}

/**
 * The operator API takes OPERATOR_KEY or the master key, never a conversation token. With neither
 * key configured it is open only where the whole API is (ALLOW_ANONYMOUS, for local use).
 */
async function operatorAccess(c: Parameters<MiddlewareHandler<AuthEnv>>[0], bearer: string | undefined, next: () => Promise<void>) {
  const config = readConfig(c.env);
  if (!config.OPERATOR_KEY && !config.API_KEY) {
    if (!config.ALLOW_ANONYMOUS)
      return errorResponse(c, "auth_not_configured", "This Worker has no OPERATOR_KEY or API_KEY: set one to use the operator API.");
    c.set("access", { kind: "anonymous" });
    return next();
  }
  if (!bearer) return unauthorized(c, "Send Authorization: Bearer <OPERATOR_KEY or API key>.");
  if (config.API_KEY && (await safeEqual(bearer, config.API_KEY))) c.set("access", { kind: "master" });
  else if (config.OPERATOR_KEY && (await safeEqual(bearer, config.OPERATOR_KEY))) c.set("access", { kind: "operator" });
  else return unauthorized(c, "The operator API takes OPERATOR_KEY or the API key; a conversation token does not open it.");
  return next();
}

function unauthorized(c: Parameters<MiddlewareHandler>[0], message: string): Response {
  const res = errorResponse(c, "unauthorized", message);
  res.headers.set("www-authenticate", 'Bearer realm="handoff-runtime"');
  return res;
}
