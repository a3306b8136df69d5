/**
 * A protocol a Worker serves beside its chat API (SSE, the AI SDK's stream, the socket): one descriptor, made by the
 * protocol's own folder (`a2a()`, `agUi()`) or by a Worker for a protocol of its own. The app reads it: its routes, its
 * paths' body limit (files or not), its part of the OpenAPI document, its errors' shape; each conversation object
 * reads its `conversation` part (what it keeps there and sends from there). What the package offers and a Worker was
 * not given (protocol-offers.ts) answers 404 `protocol_not_enabled` on its paths, saying which option serves it.
 */
import type { Hono } from "hono";
import type { ConversationPart } from "../conversation/protocol-parts.ts";
import type { Env } from "../env.ts";
import type { Network } from "../runtime/network.ts";
import type { AppEnv } from "./app-env.ts";
import type { ErrorShape } from "./errors.ts";

/** A protocol the package offers: its name and paths, its name in words, and the option of `createHandoffWorker` that serves it. */
export interface ProtocolOffer {
  readonly name: string;
  readonly paths: readonly string[];
  readonly said: string;
  readonly option: string;
}

/** A protocol a Worker serves: `a2a()` or `agUi()` from `handoff-runtime/cloudflare`, or a descriptor of its own. */
export interface Protocol {
  readonly name: string;
  /** The paths its routes serve: those whose bodies may carry files are held to the files' limit (`carriesFiles`). */
  readonly paths: readonly string[];
  /** Its bodies may carry files inline (base64, a third larger): a body may be as large as one file beside its JSON. */
  readonly carriesFiles?: boolean;
  /** Its paths' operations, for the OpenAPI document (`/v1/openapi.json`). */
  openApi?(): Record<string, unknown>;
  /**
   * How the API's errors are said on its paths (a refused credential, a body over the limit, a failure inside the
   * Worker): its body for the error on that path, whose HTTP status stays the API's; undefined, or no `errorBody`: the
   * API's `{ error: { code, message } }`.
   */
  errorBody?(error: Parameters<ErrorShape>[0], path: string): Record<string, unknown> | undefined;
  /** What it keeps in each conversation and sends from it as turns move (A2A: its tasks' push configs, and the pushes). */
  conversation?: ConversationPart;
  /** Adds its routes; `networkFor` gives the network an environment's conversations run. */
  register(app: Hono<AppEnv>, networkFor: (env: Env) => Network): void;
}

/** What a path of a protocol the Worker was not given answers: which option of `createHandoffWorker` serves it. */
export function notEnabledMessage(offer: ProtocolOffer, method: string, path: string): string {
  const fn = offer.option.slice(0, -2);
  return (
    `No route for ${method} ${path}: this Worker serves no ${offer.said}. Give createHandoffWorker ` +
    `\`protocols: [${offer.option}]\` (import { ${fn} } from "handoff-runtime/cloudflare") to serve it.`
  );
}
