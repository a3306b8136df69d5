/**
 * Signed-in users: a JWT from the team's identity provider, verified with `jose` (web standards)
 * against a JWKS URL (keys cached, refetched on an unknown `kid` at most once per 30 s, a fetch
 * given up after 5 s) or a shared HS256 secret. The algorithms are pinned by configuration, never
 * taken from the token; issuer, audience, expiry and not-before are checked with a small skew.
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from "jose";
import { type Config, ConfigError } from "../config.ts";

/** Who a verified token names: the id (AUTH_USER_CLAIM), a display name and roles. */
export interface SignedInUser {
  id: string;
  name?: string;
  roles: string[];
}

export type UserVerdict =
  | { ok: true; user: SignedInUser }
  /** 401: the token is not good (`description` says why); 503: the identity provider's keys could not be had. */
  | { ok: false; status: 401 | 503; description: string };

/** Longer tokens are refused before anything is parsed. */
const MAX_TOKEN_CHARS = 8 * 1024;
/** Clocks of the provider and of the Worker may disagree by this much. */
const CLOCK_SKEW_SECONDS = 60;
const JWKS_TIMEOUT_MS = 5_000;
const JWKS_REFETCH_COOLDOWN_MS = 30_000;

/** Whether an identity provider is configured (a JWKS URL or a shared secret). */
export function usersConfigured(config: Config): boolean {
  return config.AUTH_JWKS_URL !== undefined || config.AUTH_JWT_SECRET !== undefined;
}

/**
 * The development sign-in of `npm start`: on only when asked for (DEV_SIGN_IN), with ALLOW_ANONYMOUS
 * and no identity provider, its tokens signed with a key this isolate made (so they die with the
 * dev run). An open API alone does not turn it on: a Worker that mints tokens says so.
 */
export function devSignInEnabled(config: Config): boolean {
  return config.DEV_SIGN_IN && config.ALLOW_ANONYMOUS && !usersConfigured(config);
}

/** Whether sign-in tokens are taken at all: from the identity provider, or from the development sign-in. */
export function signInAccepted(config: Config): boolean {
  return usersConfigured(config) || devSignInEnabled(config);
}

/** The issuer of development sign-in tokens: no identity provider names itself so. */
export const DEV_ISSUER = "handoff-runtime/dev-sign-in";

let devKey: Uint8Array | undefined;

/** The development sign-in's HS256 key: random, made on first use, never stored. */
export function devSigningKey(): Uint8Array {
  devKey ??= crypto.getRandomValues(new Uint8Array(32));
  return devKey;
}

/**
 * Whether a bearer credential is a JWT (its first part decodes to a JOSE header naming an `alg`)
 * rather than a conversation token (`<id>.<grant>.<mac>`): told by its form, not by trying both.
 */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts[0]) return false;
  try {
    const header = JSON.parse(atob(parts[0].replaceAll("-", "+").replaceAll("_", "/"))) as unknown;
    return typeof header === "object" && header !== null && typeof (header as { alg?: unknown }).alg === "string";
  } catch {
    return false;
  }
}

/** Remote key sets by URL, kept for the isolate's life: their cache and cooldown live in them. */
const keySets = new Map<string, JWTVerifyGetKey>();

function verificationKey(config: Config): { key: Uint8Array | JWTVerifyGetKey; algorithms: string[]; issuer?: string } {
  if (devSignInEnabled(config)) return { key: devSigningKey(), algorithms: ["HS256"], issuer: DEV_ISSUER };
  if (config.AUTH_JWKS_URL && config.AUTH_JWT_SECRET)
    throw new ConfigError("Set one of AUTH_JWKS_URL and AUTH_JWT_SECRET, not both: the tokens are verified with one key source.");
  if (config.AUTH_JWT_SECRET)
    return { key: new TextEncoder().encode(config.AUTH_JWT_SECRET), algorithms: config.AUTH_ALGORITHMS ?? ["HS256"] };
  const url = config.AUTH_JWKS_URL!;
  let keySet = keySets.get(url);
  if (!keySet) {
    keySet = createRemoteJWKSet(new URL(url), { timeoutDuration: JWKS_TIMEOUT_MS, cooldownDuration: JWKS_REFETCH_COOLDOWN_MS });
    keySets.set(url, keySet);
  }
  return { key: keySet, algorithms: config.AUTH_ALGORITHMS ?? ["RS256", "ES256"] };
}

/** Verifies a user's JWT and reads who it names. */
export async function verifyUserToken(token: string, config: Config): Promise<UserVerdict> {
  if (token.length > MAX_TOKEN_CHARS) return refused(`The token is longer than ${MAX_TOKEN_CHARS} characters.`);
  const { key, algorithms, issuer = config.AUTH_ISSUER } = verificationKey(config);
  let payload: JWTPayload;
  try {
    const options = {
      algorithms,
      clockTolerance: CLOCK_SKEW_SECONDS,
      ...(issuer ? { issuer } : {}),
      ...(config.AUTH_AUDIENCE ? { audience: config.AUTH_AUDIENCE } : {}),
    };
    payload = (typeof key === "function" ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options)).payload;
  } catch (error) {
    return verdictOf(error);
  }
  const id = payload[config.AUTH_USER_CLAIM];
  if (typeof id !== "string" || id.length === 0 || id.length > 256)
    return refused(`The token's ${config.AUTH_USER_CLAIM} claim must be a user id (a string of 1 to 256 characters).`);
  const name = payload[config.AUTH_NAME_CLAIM];
  const roles = payload[config.AUTH_ROLES_CLAIM];
  return {
    ok: true,
    user: {
      id,
      ...(typeof name === "string" && name ? { name: name.slice(0, 100) } : {}),
      roles: typeof roles === "string" ? [roles] : Array.isArray(roles) ? roles.filter((r): r is string => typeof r === "string") : [],
    },
  };
}

/** What a failed verification says: the provider's keys out of reach is a 503, anything else about the token a 401. */
function verdictOf(error: unknown): UserVerdict {
  // The key set's own failures: a fetch that timed out, failed or did not answer 200 with JSON (jose's generic error).
  const keysUnavailable =
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid ||
    !(error instanceof errors.JOSEError) ||
    error.code === errors.JOSEError.code;
  if (keysUnavailable)
    return { ok: false, status: 503, description: "The identity provider's keys could not be fetched; try again shortly." };
  if (error instanceof errors.JWTExpired) return refused("The token has expired.");
  if (error instanceof errors.JWTClaimValidationFailed) return refused(claimRefusal(error.claim, error.reason));
  if (error instanceof errors.JOSEAlgNotAllowed) return refused("The token is signed with an algorithm this Worker does not accept.");
  if (error instanceof errors.JWKSNoMatchingKey) return refused("The token is signed with a key the identity provider does not list.");
  if (error instanceof errors.JWSSignatureVerificationFailed) return refused("The token's signature does not verify.");
  return refused("The token is not a valid JWT.");
}

/** jose's reasons are codes (`missing`, `check_failed`, `invalid`): said in words. */
function claimRefusal(claim: string, reason: string): string {
  if (reason === "missing") return `The token has no ${claim} claim, which this Worker requires.`;
  if (reason !== "check_failed") return `The token's ${claim} claim is not valid.`;
  if (claim === "nbf") return "The token is not valid yet: its nbf claim is later than now.";
  return `The token's ${claim} claim is not the one this Worker accepts.`;
}

function refused(description: string): UserVerdict {
  return { ok: false, status: 401, description };
}
