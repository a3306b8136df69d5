/** The host's schedule, as tools reach it: follow-ups a tool asks for, and what the host answers. */

/** A follow-up a tool asks for: at `at` (epoch ms), whoever holds the conversation runs a turn with `note`. */
export interface FollowUpRequest {
  at: number;
  /**
   * When the tool read the clock to ask (epoch ms): the bounds are measured from it, so a clock that moves on before the
   * host reads it refuses no follow-up that was in bounds when asked ("in one minute").
   */
  askedAt: number;
  note: string;
  /** The agent whose tool asked. */
  agent: string;
  toolCallId: string;
}

/** A follow-up the host has scheduled: its id (to cancel it) and when it is due (ISO 8601). */
export interface ScheduledFollowUp {
  id: string;
  at: string;
}

/** A delegation to run in the background (`asTool({ background: true })`): `agent` does `request`; `askedBy` gets the result. */
export interface BackgroundRequest {
  /** The delegated agent. */
  agent: string;
  request: string;
  /** The agent whose tool asked: the follow-up with the result is its. */
  askedBy: string;
  toolCallId: string;
}

/** A background delegation the host has taken on: its id (its schedule entry's, to cancel it by). */
export interface StartedDelegation {
  id: string;
  agent: string;
}

/** The host's schedule. It refuses (throws a RuntimeError with code `schedule_refused`) what its bounds do not allow. */
export interface Scheduler {
  schedule(request: FollowUpRequest): Promise<ScheduledFollowUp>;
  /** Runs a delegation apart from the turn (a host without it refuses background delegations). */
  delegate?(request: BackgroundRequest): Promise<StartedDelegation>;
}
