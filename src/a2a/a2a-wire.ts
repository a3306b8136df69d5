/**
 * A2A v1.0 on the wire, as its JSON-RPC binding carries it (the proto's JSON form: enums as their
 * names, a part one of `text`, `data`, `url`, `raw`): the version, the error codes, and the tasks
 * and messages this Worker answers. Only the fields this Worker reads or sets are named. The
 * requests it reads are checked in a2a/server/a2a-requests.ts, which only a Worker serving A2A bundles.
 */

/** The protocol version served; a request whose `A2A-Version` is empty is 0.3, which is not. */
export const A2A_VERSION = "1.0";

/** This project's extension: a task's metadata names who holds the conversation and the handoffs its turn made. */
export const HANDOFF_EXTENSION = "urn:handoff-runtime:a2a:handoffs:v1";

/** The JSON-RPC error codes of A2A and JSON-RPC 2.0 that this Worker answers. */
export const RPC_ERROR = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupportedOperation: -32004,
  versionNotSupported: -32009,
} as const;

export type TaskState =
  | "TASK_STATE_WORKING"
  | "TASK_STATE_COMPLETED"
  | "TASK_STATE_FAILED"
  | "TASK_STATE_CANCELED"
  | "TASK_STATE_INPUT_REQUIRED";

export type OutPart = { text: string } | { data: unknown; mediaType?: string };

export interface OutMessage {
  messageId: string;
  contextId: string;
  taskId: string;
  role: "ROLE_USER" | "ROLE_AGENT";
  parts: OutPart[];
  metadata?: Record<string, unknown>;
}

export interface Task {
  id: string;
  contextId: string;
  status: { state: TaskState; message?: OutMessage; timestamp: string };
  history: OutMessage[];
  metadata: Record<string, unknown>;
}
