/**
 * The A2A requests this Worker reads (the JSON-RPC envelope and the params of each method), checked
 * with zod. Apart from the wire's constants (a2a/a2a-wire.ts), which the remote-agent client and
 * every error answer use, so that a Worker that serves no A2A builds none of these schemas.
 */
import * as z from "zod";
import { DecisionSchema } from "../../runtime/wait/requests.ts";

export const RpcRequest = z.object({
  jsonrpc: z.literal("2.0", { error: 'A JSON-RPC request has "jsonrpc": "2.0".' }),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  method: z.string().min(1, "Name the method."),
  /** Checked apart: params that are not an object are invalid params (-32602), not an invalid request. */
  params: z.unknown().optional(),
});
export type RpcRequest = z.infer<typeof RpcRequest>;

const Part = z.object({
  text: z.string().optional(),
  data: z.unknown().optional(),
  url: z.string().optional(),
  raw: z.string().optional(),
  filename: z.string().optional(),
  mediaType: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const WireMessage = z.object({
  messageId: z.string().min(1, "A message has a messageId."),
  role: z.enum(["ROLE_USER", "ROLE_AGENT"], { error: "A message's role is ROLE_USER or ROLE_AGENT." }),
  parts: z.array(Part).min(1, "A message has at least one part."),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type WireMessage = z.infer<typeof WireMessage>;

export const SendMessageParams = z.object({
  message: WireMessage,
  configuration: z
    .object({
      returnImmediately: z.boolean().optional(),
      historyLength: z.number().int().min(0).optional(),
      /** Where the new task's updates are pushed, as CreateTaskPushNotificationConfig takes it (without taskId). */
      taskPushNotificationConfig: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export const TaskIdParams = z.object({ id: z.string().min(1, "Name the task: `id`."), historyLength: z.number().int().min(0).optional() });

const TASK_STATES = [
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
] as const;

export const ListTasksParams = z.object({
  contextId: z.string().min(1).optional(),
  // The proto's unset enum means no filter.
  status: z
    .union([z.enum(TASK_STATES, { error: `status is one of ${TASK_STATES.join(", ")}.` }), z.literal("TASK_STATE_UNSPECIFIED")])
    .optional(),
  pageSize: z.number().int().min(1, "pageSize is 1 to 100.").max(100, "pageSize is 1 to 100.").optional(),
  pageToken: z.string().optional(),
  historyLength: z.number().int().min(0, "historyLength is 0 or more.").optional(),
  /** Only tasks whose status changed at or after this time (ISO 8601). */
  statusTimestampAfter: z.iso.datetime({ offset: true, error: "statusTimestampAfter is an ISO 8601 time." }).optional(),
  /** Tasks here keep their text in their history and carry no artifacts: accepted, and changes nothing. */
  includeArtifacts: z.boolean().optional(),
});

/** Decisions a client sends for what a task waits for (approvals, answers, client tools' outputs), in a data part of its message. */
export const DecisionsData = z.object({ decisions: z.array(DecisionSchema).min(1) });
