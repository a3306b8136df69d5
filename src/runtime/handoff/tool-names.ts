/**
 * Transfer tool names, from agent names: NFKD folded to ASCII,
 * lower-cased, other characters to `_`; a name with nothing left gets a deterministic
 * hash; collisions get `_2`, `_3`; the whole name is capped at 60 characters.
 * Stored history refers to these names, so the mapping depends only on the names and
 * their order in the network.
 */

export const TRANSFER_PREFIX = "transfer_to_";
const MAX_TOOL_NAME = 60;

/** An agent name as it appears in its transfer tool name (ASCII, lower case, `_` for the rest). */
export function sanitizeAgentName(name: string): string {
  const folded = name
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_");
  return /[a-z0-9]/.test(folded) ? folded : `u${fnv1a64(name)}`;
}

/** Assigns each agent name its transfer tool name, in the order given. */
export function transferToolNames(agentNames: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const agentName of agentNames) {
    const candidate = uniqueToolName(`${TRANSFER_PREFIX}${sanitizeAgentName(agentName)}`, taken, MAX_TOOL_NAME);
    taken.add(candidate);
    names.set(agentName, candidate);
  }
  return names;
}

/** `name` cut to `max` characters, or, when that is taken, with `_2`, `_3`… in place of its end: how every generated tool name avoids another. */
export function uniqueToolName(name: string, taken: ReadonlySet<string>, max: number): string {
  const base = name.slice(0, max);
  let candidate = base;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `_${n}`;
    candidate = base.slice(0, max - suffix.length) + suffix;
  }
  return candidate;
}

/** 64-bit FNV-1a over UTF-8, as 16 hex digits: synchronous, so networks validate eagerly. */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, "0");
}
