/**
 * The stored forms of a conversation's state, and the one reader that upgrades what older
 * releases stored: the state row, a turn's opening, a handoff record and a suspension. Each row
 * says the form it was written in (`v`, ROW_VERSION; rows of earlier releases have none and are
 * version 1): a row of today's version is read as it is, and only older ones go through the
 * upgrades. Every default for a field an older row lacks is here, and nowhere else.
 */
import type { FileRef } from "../../runtime/messages.ts";
import type { Decision } from "../../runtime/wait/requests.ts";
import type { Suspension } from "../../runtime/wait/suspension.ts";
import { HandoffRecordSchema } from "../../runtime/events.ts";
import type { HandoffRecord } from "../../runtime/handoff/types.ts";
import { type Holding, newHolding } from "../../runtime/holding.ts";
import { NO_USAGE } from "../../runtime/usage.ts";
import { FileRefSchema } from "../../runtime/events.ts";
import { fitted, HoldingSchema, readRow, SuspensionSchema } from "./row-schemas.ts";
import * as z from "zod";

/**
 * The state row: what the conversation holds (flat beside the rest, as rows have always stored it), its token grant, its
 * owner and what its owner's list shows. The turn's wait is not here: the turn is the ledger's root run (run-ledger.ts).
 */
export interface StateRow {
  conversationId: string;
  holding: Holding;
  /**
   * Bound into every conversation token's signature: a token passes only while it matches, so
   * deleting the conversation (or rotating it) revokes every token issued before. Absent on
   * conversations stored before tokens carried it, until the master key issues one.
   */
  grant?: string | undefined;
  /** The signed-in user who created (or forked) the conversation; absent for those a backend or anonymous use made. */
  owner?: string | undefined;
  /**
   * When it was created (absent on conversations stored before it was kept), its own title and whether it is archived: what its owner's
   * inbox shows.
   */
  createdAt?: number | undefined;
  title?: string | undefined;
  archived?: boolean | undefined;
}

/** The latest turn's wait as the state carries it: its suspended step (null while it does not wait) and the decisions so far. */
export interface TurnWait {
  suspension: Suspension | null;
  decisions: Decision[];
}

/** The state as the store works with it: the state row and the wait of the latest turn. */
export type StoredState = StateRow & TurnWait;

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

/** A row's JSON before it is brought to today's form and checked: an object. */
const RowObjectSchema = z.lazy(() => z.record(z.string(), z.unknown()));

/** The form rows are written in today: 2. Version 1 is every row written before rows carried `v`. */
export const ROW_VERSION = 2;

/** The version a stored row says it was written in. */
export function versionOf(row: Json): number {
  return typeof row.v === "number" ? row.v : 1;
}

/** The state row's fields beside its holding (which the holding's schema reads from the same object). */
const StateFieldsSchema = z.lazy(() =>
  z.object({
    conversationId: z.string(),
    grant: z.string().optional(),
    owner: z.string().optional(),
    createdAt: z.number().optional(),
    title: z.string().optional(),
    archived: z.boolean().optional(),
  }),
);

/** The state row's JSON. */
export function writeStateRow(state: StateRow): string {
  const { holding, ...rest } = state;
  return JSON.stringify({ v: ROW_VERSION, ...rest, ...holding });
}

/** The state row, in today's form: a row of an earlier version is brought to it first; one that does not fit is an error. */
export function readStateRow(json: string): StateRow {
  const stored = readRow(RowObjectSchema, json, "state row");
  const row = versionOf(stored) >= ROW_VERSION ? stored : { ...stored, ...readHolding(stored) };
  const { archived, ...fields } = fitted(StateFieldsSchema, row, "state row");
  return { ...fields, holding: fitted(HoldingSchema, row, "state row's holding"), ...(archived ? { archived } : {}) };
}

/** A run's state row (what resumes it): its holder (none for the turn, whose holder is the conversation's), its wait, its asks taken. */
export interface RunStateRow {
  holding?: Holding | undefined;
  suspension: Suspension | null;
  asked: number;
}

const RunStateSchema = z.lazy(() =>
  z.object({ holding: HoldingSchema.optional(), suspension: SuspensionSchema.nullable(), asked: z.number() }),
);

export function writeRunState(state: RunStateRow): string {
  return JSON.stringify({ v: ROW_VERSION, ...state });
}

/** A run's state row, in today's form: the turn's wait moved from a state row of version 1 is upgraded as it was there. */
export function readRunState(json: string): RunStateRow {
  const stored = readRow(RowObjectSchema, json, "run's state");
  const current = versionOf(stored) >= ROW_VERSION;
  const suspension = isJson(stored.suspension) ? withKinds(current ? stored.suspension : readSuspension(stored.suspension)) : null;
  return fitted(RunStateSchema, { ...stored, suspension }, "run's state");
}

/** A turn's opening as the turns table keeps it (flat, like the state row). */
export function writeOpening(opening: TurnOpening): string {
  const note = opening.note === undefined ? {} : { note: opening.note };
  const files = opening.files?.length ? { files: opening.files } : {};
  return JSON.stringify({ v: ROW_VERSION, message: opening.message, ...note, ...files, ...opening.holding });
}

const OpeningFieldsSchema = z.lazy(() =>
  z.object({ message: z.string(), note: z.string().optional(), files: z.array(FileRefSchema).optional() }),
);

export function readOpening(json: string): TurnOpening {
  const stored = readRow(RowObjectSchema, json, "turn's opening");
  const row = versionOf(stored) >= ROW_VERSION ? stored : { ...stored, ...readHolding(stored) };
  return { ...fitted(OpeningFieldsSchema, row, "turn's opening"), holding: fitted(HoldingSchema, row, "turn's opening's holding") };
}

/** The holding fields of a version 1 row; rows stored before returning handoffs and agents' states lack the last ones. */
function readHolding(row: Json): Json {
  const start = newHolding(String(row.activeAgent));
  return {
    activeAgent: start.activeAgent,
    handoffCount: row.handoffCount ?? start.handoffCount,
    callers: row.callers ?? start.callers,
    agentStates: row.agentStates ?? start.agentStates,
    context: row.context ?? start.context,
  };
}

/** A handoff record as the handoffs table keeps it, with the version it is written in. */
export function writeHandoff(record: HandoffRecord): string {
  return JSON.stringify({ v: ROW_VERSION, ...record });
}

/** A handoffs row's record. */
export function readHandoffRow(json: string): HandoffRecord {
  return readHandoff(readRow(RowObjectSchema, json, "handoff record"));
}

/**
 * A stored handoff record (`version`: its row's, when the row keeps it apart, as the events table
 * does). Version 1 records may be from before they said their kind: a transfer had none; a
 * return had `kind: "return"`, and an on-answer one the opening transfer's id with a `:returned`
 * suffix as its call id; a person's hand back had a made-up `operator-<n>` call id and its note as the reason.
 */
export function readHandoff(stored: Json, version = versionOf(stored)): HandoffRecord {
  const { v: _v, ...raw } = stored;
  const current = version >= ROW_VERSION || raw.kind === "transfer" || raw.kind === "hand-back" || (raw.kind === "return" && "mode" in raw);
  return fitted(HandoffRecordSchema, current ? raw : upgradedHandoff(raw), "handoff record");
}

function upgradedHandoff(raw: Json): Json {
  const { toolCallId, reason, kind: _kind, ...rest } = raw;
  const id = String(toolCallId);
  const from = String(rest.from);
  const to = String(rest.to);
  const stepIndex = Number(rest.stepIndex ?? 0);
  const why = typeof reason === "string" && reason ? reason : undefined;
  if (raw.kind === "return") {
    const suffix = ":returned";
    return id.endsWith(suffix)
      ? { kind: "return", mode: "on-answer", from, to, openedBy: id.slice(0, -suffix.length), stepIndex }
      : { kind: "return", mode: "on-call", from, to, toolCallId: id, reason: why ?? "", stepIndex };
  }
  if (id.startsWith("operator-")) return { kind: "hand-back", from, to, ...(why ? { note: why } : {}) };
  return { kind: "transfer", ...rest, from, to, toolCallId: id, ...(why ? { reason: why } : {}), stepIndex };
}

function isJson(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Requests stored before they had kinds were all approvals. */
function withKinds(suspension: Json): Json {
  const pending = Array.isArray(suspension.pending) ? suspension.pending : [];
  return { ...suspension, pending: pending.map((p) => (isJson(p) && p.kind === undefined ? { ...p, kind: "approval" } : p)) };
}

/** A version 1 suspension; those stored before turns kept their progress as one value had its fields loose. */
function readSuspension(raw: Json): Json {
  const base = { assistant: raw.assistant, results: raw.results, pending: raw.pending, trailing: raw.trailing ?? [] };
  const handoffs = (list: unknown) => (Array.isArray(list) ? list : []).map((h) => (isJson(h) ? readHandoff(h, 1) : h));
  if (isJson(raw.progress)) return { ...base, progress: { ...raw.progress, handoffs: handoffs(raw.progress.handoffs) } };
  return {
    ...base,
    progress: {
      handoffs: handoffs(raw.turnHandoffs),
      agentSteps: Number(raw.agentSteps ?? 0),
      errorSteps: Number(raw.errorSteps ?? 0),
      // The suspended step's index then; the next step's now.
      stepIndex: Number(raw.stepIndex ?? 0) + 1,
      usage: raw.turnUsage ?? NO_USAGE,
    },
  };
}
