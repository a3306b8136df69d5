/**
 * A final answer that says it will hand the conversation over ("let me transfer you to billing",
 * "I'll connect you with a specialist") when no transfer was called: the users' most repeated
 * complaint about handoffs. An announcement is a first-person future or imperative verb of handing
 * over, followed closely by a reference to someone it could reach: a target's name, a word of a
 * target's description, or a generic one (a specialist, an agent, a person). Merely naming an agent
 * ("billing handles refunds") is not one.
 */
import type { Agent } from "../agent.ts";

/** What the loop does about an announced-but-unmade handoff: nothing, a `warning` event, or one more step with a note. */
export type AnnouncedHandoffs = "off" | "warn" | "nudge";

/** The note of the extra step `nudge` runs, once per turn. */
export const NUDGE_NOTE =
  "You said you would hand the conversation over, but you called no transfer tool. Call the transfer tool now, or answer the user yourself.";

const ANNOUNCING =
  /\b(?:let me|i(?:'|’)ll|i will|i am going to|i(?:'|’)m going to|i(?:'|’)m now|allow me to|i can now)\s+(?:now\s+)?(transfer|connect|hand|pass|route|forward|put|redirect|escalate|refer|get)\b/gi;

const CONDITIONAL = /\b(if|when|once|whenever|should you|ask|tell me|say)\b/i;

/** Within this many characters after the verb, a reference to a reachable agent makes the announcement. */
const REACH = 80;

const GENERIC = [
  "specialist",
  "agent",
  "colleague",
  "team",
  "department",
  "expert",
  "person",
  "human",
  "someone",
  "representative",
  "desk",
];

const STOPWORDS = new Set([
  "about",
  "their",
  "there",
  "which",
  "these",
  "those",
  "with",
  "from",
  "questions",
  "question",
  "customer",
  "customers",
]);

/** The words a reference to `target` may use: its name (and its parts), and its description's longer words. */
function wordsFor(target: Agent): string[] {
  const name = target.name.toLowerCase();
  const parts = name.split(/[-_\s]+/).filter((p) => p.length >= 3);
  const described = (target.description.toLowerCase().match(/[a-z]{5,}/g) ?? []).filter((w) => !STOPWORDS.has(w));
  return [name, name.replace(/[-_]+/g, " "), ...parts, ...described];
}

/**
 * The announcement in `text` (the sentence's words from the verb on), when it names a target the
 * agent could reach or a generic one; null when there is none.
 */
export function announcedHandoff(text: string, targets: readonly Agent[]): string | null {
  if (!targets.length) return null;
  const words = new Set([...targets.flatMap(wordsFor), ...GENERIC]);
  // Quotations and asides are blanked (same length, so indexes hold): their punctuation ends no sentence.
  const plain = text.replace(/"[^"]*"|“[^”]*”|\([^)]*\)/g, (quoted) => " ".repeat(quoted.length));
  for (const match of plain.matchAll(ANNOUNCING)) {
    // "Ask about a charge and I will hand you to a specialist", "if you like, I'll transfer you": an offer, not an announcement.
    const before = plain.slice(0, match.index);
    const clause = before.slice(
      Math.max(before.lastIndexOf("."), before.lastIndexOf("!"), before.lastIndexOf("?"), before.lastIndexOf("\n")) + 1,
    );
    if (CONDITIONAL.test(clause)) continue;
    const after = plain.slice(match.index, match.index + match[0].length + REACH).toLowerCase();
    const sentence = after.split(/[.!?\n]/)[0] ?? after;
    const said: string[] = sentence.match(/[a-z][a-z-]*/g) ?? [];
    const joined = ` ${said.join(" ")} `;
    if ([...words].some((w) => (w.includes(" ") ? joined.includes(` ${w} `) : said.includes(w) || said.includes(`${w}s`))))
      return text.slice(match.index, match.index + sentence.length).trim();
  }
  return null;
}
