/**
 * What a running tool asks the user (`ctx.ask`, `ctx.elicit`). The turn cannot hold a call open
 * across requests, so an ask with no answer yet stops the call: the step suspends with the ask as
 * a request, and once the user answers the call runs again from its start, with the answers so far
 * handed back in order (the k-th ask returns the k-th answer). Code before an ask therefore runs
 * again: a tool keeps its side effects after its asks, or wraps them in `ctx.remember`, whose value
 * the call gets back when it runs again (an MCP server's call that asked is not made twice).
 */
import * as z from "zod";
import { type Duration, durationMs } from "../duration.ts";
import { answerSchema } from "../json-schema.ts";
import type { Decision, ElicitationAnswer, ElicitationRequest, JsonSchema, QuestionRequest, UserRequest } from "./requests.ts";

/** What a tool asks with `ctx.ask`: the answer must fit `schema` (a choice, a date, free text…). */
export interface Question<Schema extends z.ZodType = z.ZodType> {
  message: string;
  schema: Schema;
  /** An operator at the desk may answer it too (the conversation's owner always may). */
  operator?: boolean;
  /** How long it waits before it expires (over the tool's, agent's and network's `approvalExpiresIn`). */
  expiresIn?: Duration;
}

/** A request as the tool asks it: without the call it belongs to, which the step fills in. */
type Asked<R> = R extends unknown ? Omit<R, "toolCallId" | "name" | "args" | "agent" | "expiresAt" | "earlier" | "recorded"> : never;

/** An MCP server's elicitation, as a tool passes it on with `ctx.elicit`: a form, or an https URL to open. */
export type Elicitation =
  | { server: string; message: string; mode: "form"; schema: JsonSchema }
  | { server: string; message: string; mode: "url"; url: string; elicitationId?: string };

/**
 * An ask the call is stopped on: it becomes the step's request of its kind. A delegated run's request is `forwarded` whole
 * (its kind, what it shows, its deadline, the path of calls), and its answer is the decision itself.
 */
export type InputAsk =
  | (Asked<QuestionRequest> & { expiresInMs?: number })
  | Asked<ElicitationRequest>
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
  ask<Schema extends z.ZodType>(question: Question<Schema>): Promise<z.infer<Schema>>;
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
      const answer = next({
        kind: "question",
        message: question.message,
        schema: answerSchema(question.schema),
        ...(question.operator ? { operator: true } : {}),
        ...(question.expiresIn === undefined ? {} : { expiresInMs: durationMs(question.expiresIn, "ctx.ask's expiresIn") }),
      });
      return question.schema.parse(answer);
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
