/**
 * What the next start of a conversation's object writes for a turn its process left running: the
 * answers of the calls it cut off, so the history holds every call that may have had an effect,
 * exactly once, and the model is told.
 */
import { type CallsInFlight, settleCallsInFlight } from "../../runtime/calls-in-flight.ts";
import type { Message, ToolMessage } from "../../runtime/messages.ts";
import { settleInterrupted, type Suspension } from "../../runtime/wait/suspension.ts";
import type { StoredEvent } from "../../wire/sse.ts";
import type { StoredState } from "./stored-state.ts";

/** A step's calls written ahead of its tools, with the events streamed before them (its `tool-call` events among them). */
export interface InFlight {
  turn: number;
  calls: CallsInFlight;
  events: StoredEvent[];
}

export interface Settlement {
  /** Appended to the history of the turn. */
  messages: Message[];
  /** The calls answered, for their `tool-result` events. */
  answered: ToolMessage[];
  /** Events streamed but not yet stored when the process died, stored before the answers' events (the calls they answer). */
  streamed: StoredEvent[];
  /** The suspension that stays (calls still undecided), or null when it is settled; absent when untouched. */
  suspension?: Suspension | null;
}

/**
 * Approved calls of a resumed leg that were running (their decisions are stored with the
 * suspension: see settleInterrupted), or the calls of a step written ahead of its tools whose
 * commit never came: each started call is answered as interrupted, the others as not run.
 */
export function settleCutOff(
  state: StoredState & { turn: number },
  history: readonly Message[],
  inFlight: InFlight | undefined,
): Settlement {
  if (state.suspension && state.decisions.length > 0) {
    const settled = settleInterrupted(state.suspension, state.decisions);
    return { messages: settled.complete ?? [], answered: settled.answered, streamed: [], suspension: settled.suspension };
  }
  if (inFlight && inFlight.turn === state.turn && !committed(inFlight.calls, history, state.suspension)) {
    const { messages, answers } = settleCallsInFlight(inFlight.calls);
    return { messages, answered: answers, streamed: inFlight.events };
  }
  return { messages: [], answered: [], streamed: [] };
}

/** The step's commit came: its results are in the history, or its step waits in the suspension. */
function committed(calls: CallsInFlight, history: readonly Message[], suspension: Suspension | null): boolean {
  const ids = new Set((calls.assistant.toolCalls ?? []).map((c) => c.id));
  if (suspension?.assistant.toolCalls?.some((c) => ids.has(c.id))) return true;
  return history.some((m) => m.role === "tool" && ids.has(m.toolCallId));
}
