/** The built-in tools an agent can be given over the signed-in user's memory: `remember` and `recall`. */
import * as z from "zod";
import { MEMORY_TYPES } from "../ports/memory-port.ts";
import { type Tool, tool } from "./tool.ts";

const RememberArgs = z.strictObject({
  text: z.string().min(1).describe("What to remember, as one short sentence about the user."),
  type: z.enum(MEMORY_TYPES).default("fact").describe("fact, preference, event, instruction (how to treat them) or task."),
  key: z
    .string()
    .max(60)
    .optional()
    .describe("What it is about (for example 'language', 'home address'): it replaces an older memory of the same key."),
});

/**
 * `remember({ text, type, key })`: keeps what the user asked to be remembered, for every later conversation with them
 * and every agent that reads memory. Refused (an error result) in an anonymous conversation and past the limits.
 */
export function rememberTool(options: { name?: string; description?: string } = {}): Tool {
  return tool({
    name: options.name ?? "remember",
    description:
      options.description ??
      "Remember something about the user for later conversations, when they ask you to or tell you a lasting " +
        "preference, address or instruction.",
    parameters: RememberArgs,
    describe: ({ text }) => `Remembered: ${text}`,
    execute: async ({ text, type, key }, ctx) => {
      const memory = await ctx.memory.remember(text, { type, ...(key ? { key } : {}) });
      return { remembered: memory.text, id: memory.id, ...(memory.replaced?.length ? { replaced: memory.replaced.length } : {}) };
    },
  });
}

/** `recall({ query })`: searches the user's memory further than what each turn recalls on its own. */
export function recallTool(options: { name?: string; description?: string } = {}): Tool {
  return tool({
    name: options.name ?? "recall",
    description:
      options.description ?? "Search what you remember of the user from earlier conversations (their orders, preferences, addresses).",
    parameters: z.strictObject({ query: z.string().min(1).max(500).describe("What to look for, in a few words.") }),
    describe: ({ query }) => `Searched my memory for "${query}"`,
    execute: async ({ query }, ctx) => {
      const found = await ctx.memory.recall(query, { limit: 20, maxTokens: 1000 });
      return { memories: found.map(({ text, type, createdAt }) => ({ text, type, since: createdAt })) };
    },
  });
}
