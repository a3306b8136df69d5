import type { HandoffRecord } from "../runtime/handoff/types.ts";
import type { Message } from "../runtime/messages.ts";
import type { Decision } from "../runtime/wait/requests.ts";
import type { Suspension } from "../runtime/wait/suspension.ts";

/** What the stored history says of a conversation, for a client that loads it (after a reload): the edge draws it in its format. */
export interface ClientHistory {
  /** A page of the stored history. */
  messages: readonly Message[];
  /** Every change of hands of the conversation, drawn where their calls are. */
  handoffs: readonly HandoffRecord[];
  /** The step waiting for approvals, kept outside the history until it is complete. */
  suspension: Suspension | null;
  /** The decisions already made on that step's calls (the others still wait). */
  decisions: readonly Decision[];
}
