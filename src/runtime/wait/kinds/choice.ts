/**
 * A choice (`ctx.ask({ message, options })`): the user picks one of the options (or, when the tool allows it, answers in
 * their own words), and the call runs again from its start with what they picked.
 */
import * as z from "zod";
import { durationMs, type Duration } from "../../duration.ts";
import { isAnswer } from "../decisions.ts";
import { exactly } from "../../schema/exactly.ts";
import { declinedWithout, type RequestBase, type RequestKind, requestBaseShape } from "./request-kind.ts";

/** A tool asked the user to pick one of `options`; with `other`, an answer in their own words is taken too. */
export interface ChoiceRequest extends RequestBase {
  kind: "choice";
  message: string;
  /** What the user picks from, in the order shown. */
  options: string[];
  /** The user may answer in their own words instead: how that answer is offered ("Another day"). */
  other?: string;
  /** An operator at the desk may answer it too (the owner always may). */
  operator?: boolean;
}

/** What a tool asks with `ctx.ask({ message, options })`: `ctx.ask` returns the option picked (or the user's own words, with `other`). */
export interface Choice {
  message: string;
  options: readonly string[];
  /** Takes an answer in the user's own words too, offered with these words ("Another day"). */
  other?: string;
  operator?: boolean;
  expiresIn?: Duration;
}

/** At most this many options, each at most OPTION_CHARS characters: a choice is a short list of buttons. */
const MAX_OPTIONS = 20;
const OPTION_CHARS = 200;

/** The request a choice asks, checked as the tool makes it, and how its answer is read back. */
export function askedChoice(choice: Choice) {
  const { options } = choice;
  if (!Array.isArray(options) || options.length === 0 || options.length > MAX_OPTIONS)
    throw new TypeError(`ctx.ask's options are 1 to ${MAX_OPTIONS} choices.`);
  if (options.some((option) => typeof option !== "string" || !option.trim() || option.length > OPTION_CHARS))
    throw new TypeError(`Each of ctx.ask's options is words of 1 to ${OPTION_CHARS} characters.`);
  if (new Set(options).size !== options.length) throw new TypeError("ctx.ask's options are each different.");
  return {
    ask: {
      kind: "choice" as const,
      message: choice.message,
      options: [...options],
      ...(choice.other?.trim() ? { other: choice.other.trim() } : {}),
      ...(choice.operator ? { operator: true } : {}),
      ...(choice.expiresIn === undefined ? {} : { expiresInMs: durationMs(choice.expiresIn, "ctx.ask's expiresIn") }),
    },
    read: (answer: unknown) => String(answer).trim(),
  };
}

const shown = () => ({
  message: z.string(),
  options: z.array(z.string()),
  other: z.string().optional(),
  operator: z.boolean().optional(),
});

export const choice: RequestKind<ChoiceRequest> = {
  kind: "choice",
  waits: "input",
  answeredWith: () => "answer",
  answerSchema: (request) =>
    request.other === undefined
      ? { type: "string", enum: request.options }
      : { type: "string", minLength: 1, maxLength: 2000, examples: request.options },
  answerProblem: (request, answer) =>
    request.other !== undefined && typeof answer === "string" && !answer.trim() ? "is empty: pick an option or write one." : undefined,
  operatorMay: (request) => request.operator === true,
  settle: (_request, decision) =>
    isAnswer(decision) ? { kind: "runs-again", asked: decision.answer } : declinedWithout(choice.declined, decision),
  declined: { byUser: "The user declined to choose", expired: "The user did not choose before the deadline: the request expired." },
  said: (request) => `${request.message} (${request.options.join(" / ")}${request.other === undefined ? "" : ` / ${request.other}`})`,
  interruptReason: "input_required",
  shownSchemas: () => [shown()],
  requestSchema: () => exactly<ChoiceRequest>()(z.object({ ...requestBaseShape(), kind: z.literal("choice"), ...shown() })),
};
