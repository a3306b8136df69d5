/**
 * A wait's deadlines, the same for every run (a turn's, a background run's): which requests still undecided are past
 * theirs, the decisions that decline them as expired, and when the wait next needs looking at.
 */
import { type Decision, REQUEST_EXPIRED, undecided, type UserRequest } from "./requests.ts";

/** A run's wait: the requests it asked and the decisions on them so far. */
export interface WaitState {
  requests: readonly UserRequest[];
  decisions: readonly Decision[];
}

function stillWaiting(wait: WaitState): UserRequest[] {
  return undecided({ suspension: { pending: wait.requests }, decisions: wait.decisions });
}

/** The undecided requests whose deadline has passed at `now`. */
export function expiredRequests(wait: WaitState, now = Date.now()): UserRequest[] {
  return stillWaiting(wait).filter((r) => r.expiresAt !== undefined && Date.parse(r.expiresAt) <= now);
}

/** The decisions a host makes for requests past their deadline: each declined, with reason `expired`. */
export function expiryDecisions(expired: readonly UserRequest[]): Decision[] {
  return expired.map((r) => ({ toolCallId: r.toolCallId, approved: false, reason: REQUEST_EXPIRED }));
}

/** The earliest deadline among the undecided requests (epoch ms), or undefined when none has one. */
export function nextDeadline(wait: WaitState): number | undefined {
  const deadlines = stillWaiting(wait).flatMap((r) => (r.expiresAt === undefined ? [] : [Date.parse(r.expiresAt)]));
  return deadlines.length ? Math.min(...deadlines) : undefined;
}
