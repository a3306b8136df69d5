/**
 * The stored forms of a conversation's state, and the one reader that upgrades what older
 * releases stored: the state row, a turn's opening, a handoff record and a suspension. Each row
 * says the form it was written in (`v`, ROW_VERSION; rows of earlier releases have none and are
 * version 1): a row of today's version is read as it is, and only older ones go through the
 * upgrades. Every default for a field an older row lacks is here, and nowhere else.
 */
import type { FileRef } from "../../runtime/messages.ts";
import type { Decision, UserRequest } from "../../runtime/wait/requests.ts";
import type { Suspension } from "../../runtime/wait/suspension.ts";
import type { HandoffRecord } from "../../runtime/handoff/types.ts";
import { type Holding, newHolding } from "../../runtime/holding.ts";
import type { AssistantMessage, Message, ToolMessage } from "../../runtime/messages.ts";
import { NO_USAGE, type UsageTotals } from "../../runtime/usage.ts";
import type { SqlWriter } from "./sql-writer.ts";
import * as z from "zod";

/** The decisions a wait has so far, as stored: each names its call; the rest is the decision as it was made. */
const StoredDecisionsSchema = z.array(z.looseObject({ toolCallId: z.string() })).transform((d) => d as unknown as Decision[]);

/** The state row: what the conversation holds (flat, as rows have always stored it), its suspension and its token grant. */
export type StateRow = Holding & {
  conversationId: string;
  /** The suspended step of the latest turn, while it waits for approvals. */
  suspension: Suspension | null;
  /** Decisions taken so far on the suspension's pending calls. */
  decisions: Decision[];
  /**
   * Bound into every conversation token's signature: a token passes only while it matches, so
   * deleting the conversation (or rotating it) revokes every token issued before. Absent on
   * conversations stored before tokens carried it, until the master key issues one.
   */
  grant?: string;
  /** The signed-in user who created (or forked) the conversation; absent for those a backend or anonymous use made. */
  owner?: string;
  /**
   * When it was created (absent on conversations stored before it was kept), its own title and whether it is archived: what its owner's
   * inbox shows.
   */
  createdAt?: number;
  title?: string;
  archived?: boolean;
};

/** The state as the store works with it: the holding as one value. */
export interface StoredState {
  conversationId: string;
  holding: Holding;
  suspension: Suspension | null;
  decisions: Decision[];
  grant?: string | undefined;
  owner?: string | undefined;
  createdAt?: number | undefined;
  title?: string | undefined;
  archived?: boolean | undefined;
}

/** What a turn started from: the user's message and what the conversation held, which a rewind returns to. */
export interface TurnOpening {
  message: string;
  holding: Holding;
  /** A turn the schedule started: its note (and `message` is empty), so a retry runs it again as such. */
  note?: string;
  /** The files the message carried, by reference: a retry sends them again. */
  files?: FileRef[];
}

type Json = Record<string, unknown>;

/** The form rows are written in today: 2. Version 1 is every row written before rows carried `v`. */
export const ROW_VERSION = 2;

/** The version a stored row says it was written in. */
export function versionOf(row: Json): number {
  return typeof row.v === "number" ? row.v : 1;
}

/** The state row's JSON. */
export function writeStateRow(state: StoredState): string {
  const { holding, ...rest } = state;
  return JSON.stringify({ v: ROW_VERSION, ...rest, ...holding });
}

export function readStateRow(json: string): StoredState {
  const row = JSON.parse(json) as Json;
  const current = versionOf(row) >= ROW_VERSION;
  return {
    conversationId: String(row.conversationId),
    holding: current ? holdingOf(row) : readHolding(row),
    suspension: row.suspension ? withKinds(current ? (row.suspension as Suspension) : readSuspension(row.suspension as Json)) : null,
    decisions: StoredDecisionsSchema.parse(row.decisions ?? []),
    ...(typeof row.grant === "string" ? { grant: row.grant } : {}),
    ...(typeof row.owner === "string" ? { owner: row.owner } : {}),
    ...(typeof row.createdAt === "number" ? { createdAt: row.createdAt } : {}),
    ...(typeof row.title === "string" ? { title: row.title } : {}),
    ...(row.archived === true ? { archived: true } : {}),
  };
}

/** A turn's opening as the turns table keeps it (flat, like the state row). */
export function writeOpening(opening: TurnOpening): string {
  const note = opening.note === undefined ? {} : { note: opening.note };
  const files = opening.files?.length ? { files: opening.files } : {};
  return JSON.stringify({ v: ROW_VERSION, message: opening.message, ...note, ...files, ...opening.holding });
}

export function readOpening(json: string): TurnOpening {
  const row = JSON.parse(json) as Json;
  const holding = versionOf(row) >= ROW_VERSION ? holdingOf(row) : readHolding(row);
  const files = Array.isArray(row.files) ? { files: row.files as FileRef[] } : {};
  return { message: String(row.message), holding, ...(typeof row.note === "string" ? { note: row.note } : {}), ...files };
}

/** The holding fields of a row of today's version, which has them all. */
function holdingOf(row: Json): Holding {
  const { activeAgent, handoffCount, callers, agentStates, context } = row as unknown as Holding;
  return { activeAgent, handoffCount, callers, agentStates, context };
}

/** The holding fields of a stored row; rows stored before returning handoffs and agents' states lack the last ones. */
function readHolding(row: Json): Holding {
  const start = newHolding(String(row.activeAgent));
  return {
    activeAgent: start.activeAgent,
    handoffCount: typeof row.handoffCount === "number" ? row.handoffCount : start.handoffCount,
    callers: (row.callers as Holding["callers"] | undefined) ?? start.callers,
    agentStates: (row.agentStates as Holding["agentStates"] | undefined) ?? start.agentStates,
    context: (row.context as Holding["context"] | undefined) ?? start.context,
  };
}

/** A handoff record as the handoffs table keeps it, with the version it is written in. */
export function writeHandoff(record: HandoffRecord): string {
  return JSON.stringify({ v: ROW_VERSION, ...record });
}

/**
 * A stored handoff record (`version`: its row's, when the row keeps it apart, as the events table
 * does). Version 1 records may be from before they said their kind: a transfer had none; a
 * return had `kind: "return"`, and an on-answer one the opening transfer's id with a `:returned`
 * suffix as its call id; a person's hand back had a made-up `operator-<n>` call id and its note as the reason.
 */
export function readHandoff(stored: Json, version = versionOf(stored)): HandoffRecord {
  const { v: _v, ...raw } = stored;
  if (version >= ROW_VERSION) return raw as unknown as HandoffRecord;
  if (raw.kind === "transfer" || raw.kind === "hand-back" || (raw.kind === "return" && "mode" in raw))
    return raw as unknown as HandoffRecord;
  const { toolCallId, reason, kind: _kind, ...rest } = raw as { toolCallId: string; reason?: string; kind?: string } & Json;
  const from = String(rest.from);
  const to = String(rest.to);
  const stepIndex = Number(rest.stepIndex ?? 0);
  if (raw.kind === "return") {
    const suffix = ":returned";
    return toolCallId.endsWith(suffix)
      ? { kind: "return", mode: "on-answer", from, to, openedBy: toolCallId.slice(0, -suffix.length), stepIndex }
      : { kind: "return", mode: "on-call", from, to, toolCallId, reason: reason ?? "", stepIndex };
  }
  if (toolCallId.startsWith("operator-")) return { kind: "hand-back", from, to, ...(reason ? { note: reason } : {}) };
  return { kind: "transfer", ...(rest as object), from, to, toolCallId, ...(reason ? { reason } : {}), stepIndex };
}

/** Requests stored before they had kinds were all approvals. */
function withKinds(suspension: Suspension): Suspension {
  if (suspension.pending.every((p) => p.kind !== undefined)) return suspension;
  return {
    ...suspension,
    pending: suspension.pending.map((p) => (p.kind === undefined ? { ...(p as object), kind: "approval" } : p) as UserRequest),
  };
}

/** A stored suspension; those stored before turns kept their progress as one value had its fields loose. */
function readSuspension(raw: Json): Suspension {
  const base = {
    assistant: raw.assistant as AssistantMessage,
    results: raw.results as Array<ToolMessage | null>,
    pending: raw.pending as UserRequest[],
    trailing: (raw.trailing as Message[] | undefined) ?? [],
  };
  if (raw.progress) {
    const progress = raw.progress as Suspension["progress"];
    return { ...base, progress: { ...progress, handoffs: progress.handoffs.map((h) => readHandoff(h as unknown as Json)) } };
  }
  return {
    ...base,
    progress: {
      handoffs: ((raw.turnHandoffs as Json[] | undefined) ?? []).map(readHandoff),
      agentSteps: Number(raw.agentSteps ?? 0),
      errorSteps: Number(raw.errorSteps ?? 0),
      // The suspended step's index then; the next step's now.
      stepIndex: Number(raw.stepIndex ?? 0) + 1,
      usage: (raw.turnUsage as Suspension["progress"]["usage"] | undefined) ?? NO_USAGE,
    },
  };
}

/** What the rows that count spending (turns, background runs) have spent, summed. */
export function spentIn(db: SqlWriter, table: "turns" | "runs WHERE mode = 'background'"): UsageTotals {
  type Row = { m: number | null; i: number | null; o: number | null; t: number | null };
  const row = db.rows<Row>(
    `SELECT sum(model_calls) AS m, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(tool_calls) AS t FROM ${table}`,
  )[0];
  return !row || row.m === null
    ? NO_USAGE
    : { modelCalls: row.m, inputTokens: row.i ?? 0, outputTokens: row.o ?? 0, toolCalls: row.t ?? 0 };
}
