/**
 * What A2A keeps in each conversation (its part, `Protocol.conversation`): a task's push notification configs, kept by
 * turn with the conversation's rows, and the status update each turn's move sends to them, through the conversation's
 * outbox (signed, retried), with the client's token and credentials as A2A sends them.
 */
import * as z from "zod";
import type { ConversationPart, Outgoing, PartContext, TurnMove, TurnEnding } from "../../conversation/protocol-parts.ts";
import { type ConversationResult, fail, ok } from "../../conversation/results.ts";
import { fitted } from "../../conversation/storage/row-schemas.ts";
import { exactly } from "../../runtime/schema/exactly.ts";
import { HANDOFF_EXTENSION, type TaskState } from "../a2a-wire.ts";
import { A2A_OFFER } from "./offer.ts";

/** One push config of a task, as A2A names its fields. */
export interface PushConfig {
  id: string;
  url: string;
  token?: string | undefined;
  authentication?: { scheme: string; credentials: string } | undefined;
}

/** A push config as kept and as answered. */
export const PushConfigSchema = exactly<PushConfig>()(
  z.lazy(() =>
    z.object({
      id: z.string(),
      url: z.string(),
      token: z.string().optional(),
      authentication: z.object({ scheme: z.string(), credentials: z.string() }).optional(),
    }),
  ),
);

/** An operation A2A's routes ask of a conversation's push configs (set, get, list, delete), by task (turn). */
export type PushConfigOp =
  | { kind: "set"; turn: number; config: PushConfig; upcoming?: boolean | undefined }
  | { kind: "delete"; turn: number; id: string; upcoming?: boolean | undefined }
  | { kind: "get"; turn: number; id: string }
  | { kind: "list"; turn: number };

const turn = () => z.number().int();
/**
 * What A2A's routes ask of a conversation's configs. `upcoming`: SendMessage's own config is set ahead for the turn its
 * message is about to start, and removed if it does not start.
 */
const PushConfigOpSchema = exactly<PushConfigOp>()(
  z.lazy(() =>
    z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("set"), turn: turn(), config: PushConfigSchema, upcoming: z.boolean().optional() }),
      z.object({ kind: z.literal("delete"), turn: turn(), id: z.string(), upcoming: z.boolean().optional() }),
      z.object({ kind: z.literal("get"), turn: turn(), id: z.string() }),
      z.object({ kind: z.literal("list"), turn: turn() }),
    ]),
  ),
);

/** The A2A task state a turn's outcome is pushed as. */
const PUSHED: Record<TurnEnding, TaskState> = {
  completed: "TASK_STATE_COMPLETED",
  waiting: "TASK_STATE_INPUT_REQUIRED",
  failed: "TASK_STATE_FAILED",
  cancelled: "TASK_STATE_CANCELED",
};

/** A2A's part in each conversation: its push configs, and the pushes. */
export const pushConfigsPart: ConversationPart = { name: A2A_OFFER.name, call: configsCall, turnMoved: pushes };

function configsCall(raw: unknown, { rows, turn: latest }: PartContext): ConversationResult<unknown> {
  const parsed = PushConfigOpSchema.safeParse(raw);
  if (!parsed.success) return fail("invalid_request", `Not an operation on push configs: ${z.prettifyError(parsed.error)}`);
  const op = parsed.data;
  const last = latest + ((op.kind === "set" || op.kind === "delete") && op.upcoming ? 1 : 0);
  if (op.turn < 1 || op.turn > last) return fail("turn_not_found", `This conversation has no turn ${op.turn}.`);
  switch (op.kind) {
    case "set":
      rows.set(op.turn, op.config.id, op.config);
      return ok(op.config);
    case "get": {
      const kept = rows.get(op.turn, op.id);
      return ok(kept === undefined ? null : fitted(PushConfigSchema, kept, "push config"));
    }
    case "list":
      return ok(configsOf(rows, op.turn));
    case "delete":
      return ok(rows.remove(op.turn, op.id) ? [] : null);
  }
}

function configsOf(rows: PartContext["rows"], turn: number): PushConfig[] {
  return rows.list(turn).map(({ value }) => fitted(PushConfigSchema, value, "push config"));
}

/** The turn's status update to each of its configs: the A2A StreamResponse `{ statusUpdate }`, naming who holds it now. */
function pushes({ turn, outcome, holder }: TurnMove, { rows, conversationId }: PartContext): Outgoing[] {
  const configs = configsOf(rows, turn);
  if (configs.length === 0) return [];
  const status = { state: PUSHED[outcome], timestamp: new Date().toISOString() };
  const body = {
    statusUpdate: { taskId: `${conversationId}:${turn}`, contextId: conversationId, status, metadata: { [HANDOFF_EXTENSION]: { holder } } },
  };
  return configs.map(({ url, token, authentication }) => ({
    body,
    to: {
      url,
      headers: {
        ...(token ? { "x-a2a-notification-token": token } : {}),
        ...(authentication ? { authorization: `${authentication.scheme} ${authentication.credentials}` } : {}),
      },
    },
  }));
}
