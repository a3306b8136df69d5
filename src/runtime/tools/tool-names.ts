/**
 * The names the runtime makes for tools, in one place: transfer tools from agent names, return
 * tools, and MCP tools from server and tool names. Each is folded to ASCII (NFKD, accents
 * dropped, other characters to `_`), and a name that would collide with one already taken gets
 * `_2`, `_3`. Stored history refers to these names, so each depends only on the names it is made
 * from and their order.
 */

export const TRANSFER_PREFIX = "transfer_to_";
/** Transfer tool names stay under the providers' 64 characters with room for a suffix. */
const MAX_TRANSFER_NAME = 60;
/** What providers accept for a tool name. */
export const MAX_TOOL_NAME = 64;

/** `text` NFKD-folded with accents dropped, and every character `allowed` does not match as `_`. */
export function foldName(text: string, allowed: RegExp): string {
  return text.normalize("NFKD").replace(/\p{M}/gu, "").replace(allowed, "_");
}

/** An agent name as it appears in its transfer tool name (ASCII, lower case, `_` for the rest). */
export function sanitizeAgentName(name: string): string {
  const folded = foldName(name.toLowerCase(), /[^a-z0-9_]/g);
  return /[a-z0-9]/.test(folded) ? folded : `u${fnv1a64(name)}`;
}

/** Assigns each agent name its transfer tool name, in the order given. */
export function transferToolNames(agentNames: readonly string[]): Map<string, string> {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const agentName of agentNames) {
    const candidate = uniqueToolName(`${TRANSFER_PREFIX}${sanitizeAgentName(agentName)}`, taken, MAX_TRANSFER_NAME);
    taken.add(candidate);
    names.set(agentName, candidate);
  }
  return names;
}

/**
 * `name` cut to `max` characters, or, when that is taken, with `_2`, `_3`… in place of its end: how every generated tool name avoids
 * another.
 */
export function uniqueToolName(name: string, taken: ReadonlySet<string>, max = MAX_TOOL_NAME): string {
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
