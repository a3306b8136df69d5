/**
 * The one change of hands. Every path that moves the conversation to another holder — a transfer
 * (a model's or a router's), a return (on call or on answer), a person's hand-back, a remote
 * agent's hand-back — decides a record, and this function alone turns it into the new holding,
 * the messages the history gains, the event, and what the counters and the hook are told.
 *
 * What each kind counts, and why (docs/handoffs.md has this table, and test/runtime/counters.test.ts
 * a test per cell): the seeds cap *transitions* to stop loops, and every loop is made of
 * transfers — a return only undoes a transfer, and a hand-back is a person's or a remote agent's
 * decision, not the model's. So only transfers count toward `handoffCount`, `maxHandoffs` and
 * `maxHandoffsPerTurn`, and only they are refused for revisiting. A return is never refused by a
 * budget (that would leave a specialist stuck holding the conversation), and a person's hand-back
 * never spends one (it must not leave a conversation that can never be handed on again).
 * `onHandoff` is told of every change of hands, with its kind.
 */
import type { RunEvent } from "../events.ts";
import type { Holding, ReturnMode } from "../holding.ts";
import type { Message } from "../messages.ts";
import type { HandBackRecord, HandoffKind, HandoffRecord, ReturnRecord, TransferRecord } from "./types.ts";

/** What one kind of change of hands means for the counters and the hook. */
export interface HandoffRules {
  /** Adds one to the conversation's `handoffCount`. */
  counted: boolean;
  /** Refused once `maxHandoffs` (the conversation's) or `maxHandoffsPerTurn` (the turn's) transfers were made. */
  capped: boolean;
  /** Refused, with `allowRevisit: false`, to an agent that already held the conversation in this turn. */
  revisitChecked: boolean;
  /** The network's `onHandoff` is called once it is committed. */
  hook: boolean;
}

export const HANDOFF_RULES: Readonly<Record<HandoffKind, HandoffRules>> = {
  transfer: { counted: true, capped: true, revisitChecked: true, hook: true },
  return: { counted: false, capped: false, revisitChecked: false, hook: true },
  "person-hand-back": { counted: false, capped: false, revisitChecked: false, hook: true },
  "remote-hand-back": { counted: false, capped: false, revisitChecked: false, hook: true },
};

/** A change of hands as decided: its record, and what the holding needs beyond it. */
export type HandoffDecision =
  /** `returns`: the handoff gives the conversation back later, so a caller frame opens. */
  | { record: TransferRecord; returns?: ReturnMode | undefined }
  /** Closes the top caller frame: the conversation goes back to its caller. */
  | { record: ReturnRecord }
  /** A person's hand-back (from the operator desk, or when their deadline passed). */
  | { record: HandBackRecord; by: "person" }
  /** A remote agent's hand-back: `said`, its last answer, is kept as its message. */
  | { record: HandBackRecord; by: "remote"; said?: string };

/** What a change of hands makes: the holding after it, what the history gains, its event, and its kind's rules. */
export interface ChangeOfHands {
  record: HandoffRecord;
  holding: Holding;
  /** Messages the change itself adds (a hand-back's note for the agent that takes over); a step's own messages come with the step. */
  messages: Message[];
  events: RunEvent[];
  kind: HandoffKind;
  rules: HandoffRules;
}

/** The kind of a decided change of hands. */
export function handoffKind(decision: HandoffDecision): HandoffKind {
  if (decision.record.kind !== "hand-back") return decision.record.kind;
  return "by" in decision && decision.by === "remote" ? "remote-hand-back" : "person-hand-back";
}

/** The one writer of who holds the conversation. */
export function changeHands(holding: Holding, decision: HandoffDecision): ChangeOfHands {
  const kind = handoffKind(decision);
  const rules = HANDOFF_RULES[kind];
  const { record } = decision;
  return {
    record,
    holding: {
      ...holding,
      activeAgent: record.to,
      handoffCount: rules.counted ? holding.handoffCount + 1 : holding.handoffCount,
      callers: callersAfter(holding, decision),
    },
    messages: handBackMessages(decision),
    events: [{ type: "handoff", ...publicRecord(record) }],
    kind,
    rules,
  };
}

/**
 * What the `handoff` event tells every reader: the record less a hand-back's note. The note is for the agent that takes
 * over (its history has it); events reach the customer's streams, where it must never show.
 */
export function publicRecord<R extends HandoffRecord>(record: R): R {
  if (record.kind !== "hand-back" || record.note === undefined) return record;
  const { note: _note, ...shown } = record;
  return shown as R;
}

/**
 * The caller stack after the change: a returning transfer opens a frame; a return closes the top
 * one; a hand-back closes the top one when the one handing back is its callee (its part is over).
 */
function callersAfter(holding: Holding, decision: HandoffDecision): Holding["callers"] {
  const { record } = decision;
  const { callers } = holding;
  if (record.kind === "transfer") {
    const returns = "returns" in decision ? decision.returns : undefined;
    return returns ? [...callers, { caller: record.from, callee: record.to, mode: returns, toolCallId: record.toolCallId }] : callers;
  }
  if (record.kind === "return") return callers.slice(0, -1);
  return callers.at(-1)?.callee === record.from ? callers.slice(0, -1) : callers;
}

/** The note the agent taking a conversation back reads, and a remote agent's last answer before it. */
function handBackMessages(decision: HandoffDecision): Message[] {
  if (!("by" in decision)) return [];
  const { from, to, note } = decision.record;
  if (decision.by === "person")
    return [
      { role: "system", agent: to, content: `The person at '${from}' handed the conversation back to '${to}'${note ? `: ${note}` : "."}` },
    ];
  return [
    ...(decision.said ? [{ role: "assistant" as const, agent: from, content: decision.said }] : []),
    { role: "system", agent: to, content: `The remote agent '${from}' gave the conversation back to you: ${note ?? "its part is done."}` },
  ];
}

/** A repair, not a change of hands: the stored holder is gone (a deploy removed it), and `agent` takes over with the frames still valid. */
export function repairedHolding(holding: Holding, agent: string, callers: Holding["callers"]): Holding {
  return agent === holding.activeAgent && callers.length === holding.callers.length
    ? holding
    : { ...holding, activeAgent: agent, callers: [...callers] };
}
