/**
 * What a running tool asks the user (`ctx.ask`, `ctx.elicit`). The turn cannot hold a call open
 * across requests, so an ask with no answer yet stops the call: the step suspends with the ask as
 * a request, and once the user answers the call runs again from its start, with the answers so far
 * handed back in order (the k-th ask returns the k-th answer). Code before an ask therefore runs
 * again: a tool keeps its side effects after its asks, or wraps them in `ctx.remember`, whose value
 * the call gets back when it runs again (an MCP server's call that asked is not made twice).
 */
import { type AnswerTo, type Ask, askedBy } from "./kinds/index.ts";
import type { Elicitation } from "./kinds/elicitation.ts";
import type { ApprovalRequest, ClientToolRequest, Decision, ElicitationAnswer, UserRequest } from "./requests.ts";

export type { Question } from "./kinds/question.ts";
export type { Choice } from "./kinds/choice.ts";
export type { Elicitation };
export type { Ask, AnswerTo } from "./kinds/index.ts";

/** A request as the tool asks it: without the call it belongs to, which the step fills in. */
type Asked<R> = R extends unknown ? Omit<R, "toolCallId" | "name" | "args" | "agent" | "expiresAt" | "earlier" | "recorded"> : never;

/**
 * An ask the call is stopped on: it becomes the step's request of its kind. A delegated run's request is `forwarded` whole
 * (its kind, what it shows, its deadline, the path of calls), and its answer is the decision itself.
 */
export type InputAsk =
  | (Asked<Exclude<UserRequest, ApprovalRequest | ClientToolRequest>> & { expiresInMs?: number })
  | { kind: "forwarded"; request: UserRequest };

/** Thrown by an ask that has no answer yet: the call stops there, and its step waits for the answer. */
export class InputNeeded extends Error {
  // A field of its own, not a parameter property: Node runs this file with types stripped only (the evals CLI does).
  readonly ask: InputAsk;
  constructor(ask: InputAsk) {
    super("This call waits for the user's answer.");
    this.ask = ask;
    this.name = "InputNeeded";
  }
}

/**
 * The asks of one run of a call, answered from `earlier` in order; `pending` is the ask it stopped on, if any. What the
 * call remembered before it stopped (`remember`) is given back in order from `recorded` when it runs again.
 */
export interface CallAsks {
  ask<A extends Ask>(question: A): Promise<AnswerTo<A>>;
  elicit(request: Elicitation): Promise<ElicitationAnswer>;
  /** A delegated run's request, asked on its behalf: resolves to the user's decision on it. */
  forward(request: UserRequest): Promise<Decision>;
  remember<T>(run: () => Promise<T>): Promise<T>;
  readonly pending: InputAsk | undefined;
  /** Every value remembered so far, those given back and those new: stored with the request the call stops on. */
  readonly recorded: readonly unknown[];
}

export function callAsks(earlier: readonly unknown[], remembered: readonly unknown[] = []): CallAsks {
  let index = 0;
  let pending: InputAsk | undefined;
  const recorded = [...remembered];
  let replayed = 0;
  const next = (ask: InputAsk): unknown => {
    // A tool that caught the first stop and asked again is stopped on the first ask still.
    if (pending || index >= earlier.length) {
      pending ??= ask;
      throw new InputNeeded(pending);
    }
    return earlier[index++];
  };
  return {
    get pending() {
      return pending;
    },
    get recorded() {
      return recorded;
    },
    async remember(run) {
      if (replayed < recorded.length) return recorded[replayed++] as Awaited<ReturnType<typeof run>>;
      const value = await run();
      // Stored as JSON: what comes back when the call runs again is what storage gives back.
      recorded.push(value === undefined ? null : JSON.parse(JSON.stringify(value)));
      replayed++;
      return value;
    },
    async ask(question) {
      if (typeof question?.message !== "string" || !question.message.trim()) throw new TypeError("ctx.ask needs a message.");
      const { ask, read } = askedBy(question);
      return read(next(ask)) as AnswerTo<typeof question>;
    },
    async forward(request) {
      return next({ kind: "forwarded", request }) as Decision;
    },
    async elicit(request) {
      if (request.mode !== "url") return next({ ...request, kind: "elicitation" }) as ElicitationAnswer;
      const url = safeUrl(request.url);
      return next({ ...request, kind: "elicitation", url: url.href, host: url.host }) as ElicitationAnswer;
    },
  };
}

/** A URL the user is asked to open: https only, so what they see is the host they reach. */
function safeUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`The elicitation's URL ${JSON.stringify(raw)} is not a URL.`);
  }
  if (url.protocol !== "https:")
    throw new Error(`The elicitation's URL must be https, not ${url.protocol.replace(/:$/, "")}: it was not shown.`);
  return url;
}
