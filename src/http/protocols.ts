/**
 * The protocols a Worker may serve beside its chat API (SSE, the AI SDK's stream, the socket):
 * A2A and AG-UI. A Worker serves those it is given (`createHandoffWorker({ protocols: [a2a(), agUi()] })`)
 * and bundles only their code; the others' paths answer 404 `protocol_not_enabled`, saying what turns them on.
 */
import type { Hono } from "hono";
import type { Env } from "../env.ts";
import type { Network } from "../runtime/network.ts";
import type { AppEnv } from "./app-env.ts";

/** The protocols a Worker may serve beside its chat API. */
export type ProtocolName = "a2a" | "ag-ui";

/** A protocol a Worker serves: `a2a()` or `agUi()` from `handoff-runtime/cloudflare`. */
export interface Protocol {
  readonly name: ProtocolName;
  /** Adds the protocol's routes; `networkFor` gives the network an environment's conversations run. */
  register(app: Hono<AppEnv>, networkFor: (env: Env) => Network): void;
}

export const A2A_CARD_PATH = "/.well-known/agent-card.json";
export const A2A_RPC_PATH = "/v1/a2a";
export const AG_UI_PATH = "/v1/ag-ui";

/** Each protocol's paths, its name in words, and the option that serves it. */
export const PROTOCOL_ROUTES: Record<ProtocolName, { paths: readonly string[]; said: string; option: string }> = {
  a2a: { paths: [A2A_CARD_PATH, A2A_RPC_PATH], said: "A2A", option: "a2a()" },
  "ag-ui": { paths: [AG_UI_PATH], said: "AG-UI", option: "agUi()" },
};

/** What a path of a protocol the Worker was not given answers: which option of `createHandoffWorker` serves it. */
export function notEnabledMessage(name: ProtocolName, method: string, path: string): string {
  const { said, option } = PROTOCOL_ROUTES[name];
  const fn = option.slice(0, -2);
  return (
    `No route for ${method} ${path}: this Worker serves no ${said}. Give createHandoffWorker ` +
    `\`protocols: [${option}]\` (import { ${fn} } from "handoff-runtime/cloudflare") to serve it.`
  );
}
