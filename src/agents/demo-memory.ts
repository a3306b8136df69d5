/**
 * What the offline demo model remembers of a customer, by patterns as deterministic as the rest of it: an order they
 * named, the language they asked to be written to in, where they live or moved to. It reads a conversation for memories
 * (the memory read's call), stores what the customer asks it to remember (the `remember` tool), and reads what a turn
 * recalled from its instructions.
 */
import type { ExtractedMemory, Message, ToolCall, ToolMessage } from "../runtime/index.ts";

const LANGUAGES = "French|German|Spanish|Italian|Dutch|Portuguese|English";

/** The memories one of the customer's messages holds, by key: the later of two of a key wins. */
export function memoriesIn(text: string): ExtractedMemory[] {
  const found = new Map<string, ExtractedMemory>();
  const order = /\b([A-Z]\d{4})\b/i.exec(text)?.[1]?.toUpperCase();
  if (order) found.set("order", { text: `Their order is ${order}`, type: "fact", key: "order" });
  const language = new RegExp(`\\b(?:write|speak|talk|answer|reply)(?: to me)? in (${LANGUAGES})\\b`, "i").exec(text)?.[1];
  if (language) {
    const name = language[0]!.toUpperCase() + language.slice(1).toLowerCase();
    found.set("language", { text: `Prefers to be written to in ${name}`, type: "preference", key: "language" });
  }
  // The last one said wins: "my address is …; oh, and I moved to …".
  const addresses = [...text.matchAll(/\b(?:my (?:new )?address is|I(?: have)? moved to|I live (?:in|at))\s+([^.!?]+)/gi)];
  const address = addresses.at(-1)?.[1]?.trim();
  if (address) found.set("home address", { text: `Lives at ${address}`, type: "fact", key: "home address" });
  return [...found.values()];
}

/** The memory read's answer: the memories of each of the customer's lines (`[index] User: …`), as JSON. */
export function demoExtraction(transcript: string): string {
  const memories = transcript.split("\n").flatMap((line) => {
    const said = /^\[(\d+)\] User: (.*)$/.exec(line);
    return said ? memoriesIn(said[2]!).map((m) => ({ ...m, message: Number(said[1]) })) : [];
  });
  return JSON.stringify({ memories });
}

/** Asked to remember something ("remember that…", "please remember…"), with the `remember` tool: its call, or its answer. */
export function rememberAsked(
  text: string,
  results: ToolMessage[],
  has: (name: string) => boolean,
): string | Array<Omit<ToolCall, "id">> | undefined {
  if (!/\bremember\b/i.test(text) || !has("remember")) return undefined;
  const done = results.filter((r) => r.name === "remember");
  const wanted = memoriesIn(text);
  if (done.length < Math.max(1, wanted.length)) {
    const next = wanted[done.length] ?? { text: text.replace(/^.*?\bremember\b(?: that)?\s*/i, ""), type: "fact" };
    return [{ name: "remember", arguments: JSON.stringify({ text: next.text, type: next.type, ...(next.key ? { key: next.key } : {}) }) }];
  }
  const refused = done.find((r) => r.isError);
  if (refused) return `I could not remember that: ${refused.content}`;
  const kept = done.map((r) => spokenTo((JSON.parse(r.content) as { remembered: string }).remembered));
  return `I will remember that for next time: ${kept.join("; ")}.`;
}

/** A memory about the customer, said to them: "Their order is A1001" is "your order is A1001". */
function spokenTo(memory: string): string {
  return memory
    .replace(/^Their /, "your ")
    .replace(/^Prefers /, "you prefer ")
    .replace(/^Lives /, "you live ");
}

/** What a turn recalled of the customer (the recalled memories in the agent's instructions), as the demo uses it. */
export interface Recalled {
  order?: string | undefined;
  language?: string | undefined;
}

export function recalledOf(instructions: string): Recalled {
  const note = instructions.split("What you remember of this user")[1] ?? "";
  return {
    order: /\border is ([A-Z]\d{4})\b/.exec(note)?.[1],
    language: new RegExp(`written to in (${LANGUAGES})`).exec(note)?.[1],
  };
}

/** The customer's words, with the order they named in an earlier conversation when they name none now. */
export function withRecalledOrder(text: string, recalled: Recalled, messages: readonly Message[]): { text: string; recalled: boolean } {
  const named = messages.some((m) => m.role === "user" && /\b[A-Z]\d{4}\b/i.test(m.content));
  if (named || !recalled.order) return { text, recalled: false };
  return { text: `${text} ${recalled.order}`, recalled: true };
}
