import type { MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { type Config, readConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { bearerChallenge, errorResponse } from "./errors.ts";
import { conversationIdOf } from "./schemas.ts";
import { safeEqual, verifyToken } from "./tokens.ts";
import { fileLinkOpens } from "../conversation/files/file-links.ts";
import { devSignInEnabled, looksLikeJwt, type SignedInUser, signInAccepted, usersConfigured, verifyUserToken } from "./user-tokens.ts";

/**
 * Who a request is, once its credential is checked: the master key, an operator, a conversation token, a signed-in user, or anonymous use.
 */
export type Access =
  | { kind: "master" }
  /** The operator API: by the shared key, or by a signed-in user with the operator role (`person`). */
  | { kind: "operator"; person?: { id: string; name?: string } }
  | { kind: "conversation"; conversationId: string; grant: string }
  /** A signed-in user: the Durable Object admits them to the conversations they own. */
  | { kind: "user"; user: SignedInUser }
  | { kind: "anonymous" };

/** The operator API: the desk's list, and a conversation's operator routes. */
const OPERATOR_PATH = /^\/v1\/(operator\/|conversations\/[^/]+\/operator\/)/;

type AuthEnv = { Bindings: Env; Variables: { access: Access } };
type AuthContext = Parameters<MiddlewareHandler<AuthEnv>>[0];

const CONVERSATION_PATH = /^\/v1\/conversations\/([^/]+)/;
/** A conversation's file: what a signed link opens. */
const FILE_PATH = /^\/v1\/conversations\/([^/]+)\/files\/([^/]+)$/;

/**
 * Guards /v1/*. Fails closed: with no API_KEY and no identity provider the API answers 503 unless
 * ALLOW_ANONYMOUS=true. The master key opens everything; a signed-in user's JWT (told from a
 * conversation token by its form) opens their own conversations; a conversation token its own.
 */
export function requireAccess(): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const config = readConfig(c.env);
    // A browser's WebSocket cannot send Authorization: the socket route takes the credential as ?token= too.
    const bearer =
      /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1] ??
      (c.req.path.endsWith("/socket") ? c.req.query("token") : undefined);
    const users = usersConfigured(config);
    // Cloudflare Access puts the user's JWT in its own header, whenever JWTs are configured.
    const credential = bearer ?? (users ? c.req.header("cf-access-jwt-assertion") : undefined);
    const signIns = signInAccepted(config);
    // The path within this app: a team may mount it under a prefix of its own Worker.
    const path = c.req.path.slice(basePath(c).replace(/\/$/, "").length);
    if (c.req.query("signature") !== undefined) return linkAccess(c, config, path, next);
    const operator = OPERATOR_PATH.test(path);
    if (credential && signIns && looksLikeJwt(credential) && !(config.API_KEY && (await safeEqual(credential, config.API_KEY))))
      return userAccess(c, credential, operator, next);
    if (operator) return operatorAccess(c, credential, next);
    if (!config.API_KEY && !users) {
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
    if (!credential) return challenge(c, "Send Authorization: Bearer <API key, your sign-in token or a conversation token>.");
    if (config.API_KEY && (await safeEqual(credential, config.API_KEY))) {
      c.set("access", { kind: "master" });
      return next();
    }
    return conversationAccess(c, config, credential, path, next);
  };
}

/**
 * A signed link (FILES_SENT_AS=url): it opens the one file it names, for a GET, until it expires, with no other
 * credential; anything else with a `signature` is refused.
 */
async function linkAccess(c: AuthContext, config: Config, path: string, next: () => Promise<void>) {
  const [, conversationId, fileId] = FILE_PATH.exec(path) ?? [];
  const secret = config.SESSION_SECRET ?? config.API_KEY;
  const opens =
    c.req.method === "GET" &&
    conversationId !== undefined &&
    fileId !== undefined &&
    secret !== undefined &&
    (await fileLinkOpens(secret, conversationId, decodeURIComponent(fileId), c.req.query("expires"), c.req.query("signature")));
  if (!opens) return errorResponse(c, "forbidden", "This file link is not valid here, or it has expired: ask for the file again.");
  c.set("access", { kind: "master" });
  return next();
}

/** A conversation token opens its own conversation, and the agents and API description, only. */
async function conversationAccess(c: AuthContext, config: Config, token: string, path: string, next: () => Promise<void>) {
  const secret = config.SESSION_SECRET ?? config.API_KEY;
  const granted = secret ? await verifyToken(secret, token) : null;
  if (!granted)
    return invalidToken(c, "The bearer token is not valid: not this Worker's API key, a sign-in token or a conversation token it signed.");
  // Conversation ids need no decoding (A-Z, a-z, 0-9, _ and -): an escape in one is a malformed id.
  const segment = CONVERSATION_PATH.exec(path)?.[1];
  const requested = segment === undefined ? undefined : conversationIdOf(segment);
  const conversationScoped = requested !== undefined || path === "/v1/agents" || path === "/v1/openapi.json";
  if (!conversationScoped || (requested !== undefined && requested !== granted.conversationId)) {
    return errorResponse(c, "forbidden", "This conversation token does not grant access to this resource.");
  }
  c.set("access", { kind: "conversation", ...granted });
  return next();
}

/**
 * A signed-in user: their own conversations (the Durable Object checks whose), or, with the
 * operator role, the operator API. A token that does not verify is a 401 saying why; keys that
 * cannot be fetched a 503, never an open door.
 */
async function userAccess(c: AuthContext, token: string, operatorPath: boolean, next: () => Promise<void>) {
  const config = readConfig(c.env);
  const verdict = await verifyUserToken(token, config);
  if (!verdict.ok) {
    if (verdict.status === 503) return errorResponse(c, "auth_unavailable", verdict.description);
    return invalidToken(c, verdict.description);
  }
  const { user } = verdict;
  if (operatorPath) {
    if (!user.roles.includes(config.AUTH_OPERATOR_ROLE))
      return errorResponse(c, "forbidden", `The operator API needs the '${config.AUTH_OPERATOR_ROLE}' role in your sign-in token.`);
    c.set("access", { kind: "operator", person: { id: user.id, ...(user.name ? { name: user.name } : {}) } });
  } else c.set("access", { kind: "user", user });
  return next();
}

/**
 * The operator API takes OPERATOR_KEY or the master key, never a conversation token. With neither
 * key configured it is open only where the whole API is (ALLOW_ANONYMOUS, for local use), and where
 * the development sign-in is offered (`npm start`) only to an operator signed in with it: a guest's
 * messages are not for whoever opens the desk.
 */
async function operatorAccess(c: AuthContext, bearer: string | undefined, next: () => Promise<void>) {
  const config = readConfig(c.env);
  if (!config.OPERATOR_KEY && !config.API_KEY) {
    if (!config.ALLOW_ANONYMOUS || usersConfigured(config))
      return errorResponse(c, "auth_not_configured", "This Worker has no OPERATOR_KEY or API_KEY: set one to use the operator API.");
    if (devSignInEnabled(config))
      return challenge(c, "Sign in as an operator to use the desk: the development sign-in, with “operator” ticked.");
    c.set("access", { kind: "anonymous" });
    return next();
  }
  if (!bearer) return challenge(c, "Send Authorization: Bearer <OPERATOR_KEY or API key>.");
  if (config.API_KEY && (await safeEqual(bearer, config.API_KEY))) c.set("access", { kind: "master" });
  else if (config.OPERATOR_KEY && (await safeEqual(bearer, config.OPERATOR_KEY))) c.set("access", { kind: "operator" });
  else return invalidToken(c, "The operator API takes OPERATOR_KEY or the API key; a conversation token does not open it.");
  return next();
}

/** No credential was sent: the bare challenge (RFC 6750 §3.1: no error code then). */
function challenge(c: Parameters<MiddlewareHandler>[0], message: string): Response {
  const res = errorResponse(c, "unauthorized", message);
  res.headers.set("www-authenticate", bearerChallenge(c));
  return res;
}

/** A credential was sent and is not good (unknown, expired, forged): `invalid_token`, and why. */
function invalidToken(c: Parameters<MiddlewareHandler>[0], description: string): Response {
  const res = errorResponse(c, "unauthorized", description);
  res.headers.set("www-authenticate", bearerChallenge(c, description));
  return res;
}
