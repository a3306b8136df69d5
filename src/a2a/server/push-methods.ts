/**
 * A2A push notifications: a client names where a task's updates go (CreateTaskPushNotificationConfig)
 * and reads, lists and deletes what it named. The task's conversation keeps the configs, and A2A's
 * part of it pushes each update through its outbox (push-configs.ts). The URL is checked
 * against SSRF: https, and no loopback, private or link-local address, unless
 * `A2A_PUSH_ALLOW_PRIVATE=true` says a development setup pushes to one.
 */
import type { Context } from "hono";
import * as z from "zod";
import { readConfig } from "../../config.ts";
import type { AppEnv } from "../../http/app-env.ts";
import { expectOk } from "../../http/request.ts";
import { clientOf, parsed, RpcFailure } from "./rpc.ts";
import { parseTaskId } from "./tasks.ts";
import { type PushConfig, type PushConfigOp, PushConfigSchema } from "./push-configs.ts";
import { A2A_OFFER } from "./offer.ts";

/** A field the method needs: absent, not a string or empty, the client is told the same thing. */
const named = (message: string) => z.string({ error: message }).min(1, message);
const TaskRef = z.object({ taskId: named("Name the task: `taskId`.") });
const ConfigRef = TaskRef.extend({ id: named("Name the config: `id`.") });
const PUSH_URL = "`url` is where updates are pushed: an https URL.";
const CreateParams = TaskRef.extend({
  id: z.string().max(200).optional(),
  url: z.url({ error: PUSH_URL }),
  token: z.string().max(1000).optional(),
  authentication: z.object({ scheme: z.string().min(1).max(50), credentials: z.string().max(4000) }).optional(),
});

type Method = (c: Context<AppEnv>, params: Record<string, unknown>) => Promise<unknown>;

/** The four methods, by their A2A 1.0 names. */
export const pushMethods: Record<string, Method> = {
  CreateTaskPushNotificationConfig: async (c, params) => {
    const { taskId, ...rest } = parsed(CreateParams, params);
    const config = configOf(c, rest);
    const task = taskOf(taskId);
    await configsCall(c, task.conversationId, { kind: "set", turn: task.turn, config });
    return shown(taskId, config);
  },
  GetTaskPushNotificationConfig: async (c, params) => {
    const { taskId, id } = parsed(ConfigRef, params);
    const task = taskOf(taskId);
    const config = PushConfigSchema.nullable().parse(await configsCall(c, task.conversationId, { kind: "get", turn: task.turn, id }));
    if (!config) throw noConfig(taskId, id);
    return shown(taskId, config);
  },
  ListTaskPushNotificationConfigs: async (c, params) => {
    const { taskId } = parsed(TaskRef.loose(), params);
    const task = taskOf(taskId);
    const configs = z.array(PushConfigSchema).parse(await configsCall(c, task.conversationId, { kind: "list", turn: task.turn }));
    return { configs: configs.map((config) => shown(taskId, config)), nextPageToken: "" };
  },
  DeleteTaskPushNotificationConfig: async (c, params) => {
    const { taskId, id } = parsed(ConfigRef, params);
    const task = taskOf(taskId);
    const deleted = await configsCall(c, task.conversationId, { kind: "delete", turn: task.turn, id });
    if (deleted === null) throw noConfig(taskId, id);
    return {};
  },
};

/**
 * SendMessage's own push config, set for the turn its message is about to start (before it starts,
 * so even a turn that ends at once is pushed); answers where it was set.
 */
export async function pushConfigAhead(c: Context<AppEnv>, conversationId: string, raw: unknown): Promise<{ turn: number; id: string }> {
  const config = configOf(c, parsed(CreateParams.omit({ taskId: true }), raw));
  const latest = await clientOf(c, conversationId).turnView();
  const turn = (latest.ok ? latest.value.turn : 0) + 1;
  await configsCall(c, conversationId, { kind: "set", turn, config, upcoming: true });
  return { turn, id: config.id };
}

/** An operation on the conversation's push configs, which A2A's part of the conversation answers (push-configs.ts). */
export function configsCall(c: Context<AppEnv>, conversationId: string, op: PushConfigOp): Promise<unknown> {
  return expectOk(clientOf(c, conversationId).protocolCall(A2A_OFFER.name, op));
}

function configOf(c: Context<AppEnv>, params: Omit<z.infer<typeof CreateParams>, "taskId">): PushConfig {
  const { id, url, token, authentication } = params;
  refuseUnsafeUrl(url, readConfig(c.env).A2A_PUSH_ALLOW_PRIVATE);
  return { id: id || crypto.randomUUID(), url, ...(token ? { token } : {}), ...(authentication ? { authentication } : {}) };
}

function taskOf(taskId: string): { conversationId: string; turn: number } {
  const named = parseTaskId(taskId);
  if (!named) throw new RpcFailure("taskNotFound", "No such task.");
  return named;
}

/** A config as A2A answers it: the client's credentials are not echoed back. */
function shown(taskId: string, config: PushConfig): Record<string, unknown> {
  const { authentication, ...rest } = config;
  return { taskId, ...rest, ...(authentication ? { authentication: { scheme: authentication.scheme, credentials: "" } } : {}) };
}

function noConfig(taskId: string, id: string): RpcFailure {
  return new RpcFailure("invalidParams", `Task ${taskId} has no push notification config '${id}'.`);
}

/**
 * Refuses a push URL a Worker should not call on a client's say-so: not https, a host that is an
 * IP literal in a loopback, private, link-local or unspecified range, or a local name.
 */
export function refuseUnsafeUrl(raw: string, allowPrivate: boolean): void {
  const url = new URL(raw);
  if (allowPrivate) {
    if (url.protocol !== "https:" && url.protocol !== "http:") throw unsafe(raw, "it is not http(s)");
    return;
  }
  if (url.protocol !== "https:") throw unsafe(raw, "push URLs are https");
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal"))
    throw unsafe(raw, "it names a local host");
  if (privateIp(host)) throw unsafe(raw, "it is a loopback, private or link-local address");
}

function unsafe(url: string, why: string): RpcFailure {
  return new RpcFailure("invalidParams", `The push URL ${url} is refused: ${why} (A2A_PUSH_ALLOW_PRIVATE=true allows it for development).`);
}

function privateIp(host: string): boolean {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host)?.slice(1).map(Number);
  if (v4) {
    const [a, b] = v4 as [number, number];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (!host.includes(":")) return false;
  // IPv6: loopback, unspecified, unique local (fc00::/7), link-local (fe80::/10), and IPv4 mapped into it.
  return host === "::1" || host === "::" || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || host.startsWith("::ffff:");
}
