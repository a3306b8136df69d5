/** The host's schedule, as tools reach it: follow-ups a tool asks for, and what the host answers. */

/** A follow-up a tool asks for: at `at` (epoch ms), whoever holds the conversation runs a turn with `note`. */
export interface FollowUpRequest {
  at: number;
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

/** The host's schedule. It refuses (throws a RuntimeError with code `schedule_refused`) what its bounds do not allow. */
export interface Scheduler {
  schedule(request: FollowUpRequest): Promise<ScheduledFollowUp>;
}
