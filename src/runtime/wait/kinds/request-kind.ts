/**
 * What every kind of request to the user is: one descriptor the machinery reads (the checks, the settling of the call,
 * the events, the statuses, each wire and the page), so a new kind is its own file and its card, not a case in many.
 */
import * as z from "zod";
import type { JsonSchema } from "../../schema/json-schema.ts";
import { type Decision, isAnswer, REQUEST_EXPIRED } from "../decisions.ts";

export type { JsonSchema } from "../../schema/json-schema.ts";

/** What every request to the user names: the call that waits, whose it is, and until when. */
export interface RequestBase {
  toolCallId: string;
  name: string;
  args: unknown;
  /** The agent whose tool it is: it runs with that agent's tool even after a transfer. */
  agent: string;
  /** When it is declined with reason `expired` if no one has answered it (ISO 8601); absent: it waits as long as it takes. */
  expiresAt?: string;
  /**
   * A delegated agent asks (`Agent.asTool`): `path` is the delegating calls (outermost first; `toolCallId` above is the first,
   * the call the conversation's step waits on), `toolCallId` the delegated run's own call. `name`, `args` and `agent` are that
   * call's. The decision resumes the delegated run, then the delegating one.
   */
  delegated?: { path: string[]; toolCallId: string };
  /** Answers to the call's earlier asks, in order: the call runs again from its start with them (kept out of what clients see). */
  earlier?: unknown[];
  /** What the call remembered before it stopped (`ctx.remember`), given back in order when it runs again (kept out of what clients see). */
  recorded?: unknown[];
}

/** The fields every request has in common, and those the host keeps out of what clients see. */
type Common = keyof RequestBase | "kind";

/** What a kind adds to the base: what it shows the user. */
export type ShownFields<R extends RequestBase> = Omit<R, Common>;

/**
 * What a decision does to the call that waits: answered without running (a decline, a client tool's output), run (an
 * approved call), or run again from its start with what its ask returns (a question's answer, an elicitation's outcome).
 */
export type Settlement =
  | { kind: "answered"; content: string; result: unknown; isError: boolean }
  | { kind: "runs" }
  | { kind: "runs-again"; asked: unknown };

/** The words the model reads when a request is declined, by the user or by its deadline. */
export interface DeclineWords {
  /** Followed by `: <reason>` when the user gave one, else by a full stop. */
  byUser: string;
  expired: string;
}

/** One kind of request: everything the checks, the loop, the host, the wires and the page need to know of it. */
export interface RequestKind<R extends RequestBase & { kind: string } = RequestBase & { kind: string }> {
  readonly kind: R["kind"];
  /** Announced as `approval-required` (the turn `awaiting_approval`) or `input-required` (`awaiting_input`). */
  readonly waits: "approval" | "input";
  /** How the user answers it: yes or no (`approved`), an `answer`, or the output of a tool their client runs (an `answer`). */
  answeredWith(request: R): "yes-no" | "answer" | "tool-output";
  /** What an answer must fit, for the checks and for the wires that describe it (AG-UI's `responseSchema`); none for yes or no. */
  answerSchema(request: R): JsonSchema | undefined;
  /** What else is wrong with an answer that fits its schema, or undefined. */
  answerProblem?(request: R, answer: unknown): string | undefined;
  /** Whether an operator at the desk may answer it (the conversation's owner always may). */
  operatorMay(request: R): boolean;
  /** What the decision does to the call (a decline of a kind that runs again is its ask's outcome, not an answer). */
  settle(request: R, decision: Decision): Settlement;
  /** What the model reads when it is declined. */
  readonly declined: DeclineWords;
  /** The request in words for people: a trace span's name, AG-UI's interrupt message, A2A's status. */
  said(request: R): string;
  /** AG-UI's interrupt `reason` for it. */
  readonly interruptReason: string;
  /** Its fields as its event shows them (one or more shapes, each beside the base fields). */
  shownSchemas(): z.ZodRawShape[];
  /** The whole request as a wait stores it: what a stored row is read through. */
  requestSchema(): z.ZodType<R>;
}

/** The model's words for a decline of a request of `words`' kind: the user's reason, or its deadline's. */
export function declineMessage(words: DeclineWords, decision: { reason?: string | undefined }): string {
  if (decision.reason === REQUEST_EXPIRED) return words.expired;
  const reason = decision.reason?.trim();
  return `${words.byUser}${reason ? `: ${reason}` : "."}`;
}

/** A decline answered without running the call, in the kind's words. */
export function declinedWithout(words: DeclineWords, decision: Decision): Settlement {
  const content = declineMessage(words, isAnswer(decision) ? {} : decision);
  return { kind: "answered", content, result: content, isError: true };
}

/** The fields every request has that its event shows (both request events' schemas read them). */
export function requestShownShape() {
  return {
    toolCallId: z.string(),
    name: z.string(),
    args: z.unknown(),
    agent: z.string(),
    expiresAt: z.string().optional(),
    delegated: z.strictObject({ path: z.array(z.string()), toolCallId: z.string() }).optional(),
  };
}

/** The fields every request has, as a stored wait keeps them: those its event shows, and the answers its call ran with. */
export function requestBaseShape() {
  return { ...requestShownShape(), earlier: z.array(z.unknown()).optional(), recorded: z.array(z.unknown()).optional() };
}

/** A JSON Schema in stored requests and events: an object, checked no further. */
export const schemaField = () => z.record(z.string(), z.unknown());
