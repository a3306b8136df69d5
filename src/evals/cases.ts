/** Eval cases, one JSON object per line (JSONL), checked with zod: a bad line is refused with its number and what is wrong. */
import * as z from "zod";
import { errorMessage } from "../runtime/errors.ts";

/** What must hold after a turn: who holds the conversation, tools called or not, handoffs, agents not reached. */
export const TurnExpectation = z.strictObject({
  holder: z.string().min(1).optional(),
  calls: z.array(z.string().min(1)).optional(),
  notCalls: z.array(z.string().min(1)).optional(),
  maxHandoffs: z.number().int().min(0).optional(),
  notReached: z.array(z.string().min(1)).optional(),
});
export type TurnExpectation = z.infer<typeof TurnExpectation>;

const HistoryMessage = z.union([
  z.strictObject({ role: z.literal("user"), content: z.string() }),
  z.strictObject({ role: z.literal("assistant"), agent: z.string(), content: z.string() }),
]);

/** One eval case: a conversation's user turns (optionally an earlier history and a starting holder) and what must hold after each. */
export const EvalCase = z.strictObject({
  id: z.string().min(1, "`id` names the case."),
  tags: z.array(z.string()).optional(),
  /** Who holds the conversation before the first turn (the entry agent by default). */
  holder: z.string().min(1).optional(),
  /** An earlier conversation, as plain user and assistant messages. */
  history: z.array(HistoryMessage).optional(),
  turns: z
    .array(z.strictObject({ user: z.string().min(1, "`user` is the user's message."), expect: TurnExpectation.optional() }))
    .min(1, "`turns` needs at least one user turn."),
});
/** One eval case, as `EvalCase` parses it. */
export type EvalCase = z.infer<typeof EvalCase>;

/** The cases of a JSONL file, or the first bad line's number and what is wrong with it. */
export type ParsedCases = { ok: true; cases: EvalCase[] } | { ok: false; line: number; message: string };

/** Reads JSONL; blank lines and lines starting with `//` are skipped; case ids must be unique. */
export function parseCases(text: string): ParsedCases {
  const cases: EvalCase[] = [];
  const ids = new Set<string>();
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line || line.startsWith("//")) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      return { ok: false, line: index + 1, message: `not JSON: ${errorMessage(error)}` };
    }
    const parsed = EvalCase.safeParse(value);
    if (!parsed.success) return { ok: false, line: index + 1, message: z.prettifyError(parsed.error).replaceAll("\n", " ") };
    if (ids.has(parsed.data.id)) return { ok: false, line: index + 1, message: `the id '${parsed.data.id}' is used twice.` };
    ids.add(parsed.data.id);
    cases.push(parsed.data);
  }
  if (!cases.length) return { ok: false, line: 0, message: "no cases: write one JSON object per line." };
  return { ok: true, cases };
}
