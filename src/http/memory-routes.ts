/**
 * A signed-in user's own memory (GET, PATCH and DELETE /v1/me/memory…): what their conversations' agents remember of
 * them, to see, correct and erase. Only the user reaches it: a conversation's token, the master key and the operator key
 * are refused, since a memory outlives the conversation that made it.
 */
import type { Context, Hono } from "hono";
import * as z from "zod";
import { readConfig } from "../config.ts";
import { MEMORY_TYPES } from "../runtime/ports/memory-port.ts";
import type { MemoryResult, UserMemoryStore } from "../memory/memory-store.ts";
import { memoryOf } from "../memory/memory-of.ts";
import type { AppEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { readJson, readQuery } from "./request.ts";

export const MemoryQueryParams = z.lazy(() =>
  z.strictObject({
    q: z.string().max(500).optional().describe("Words to search the memories for; all memories (newest first) without it."),
    limit: z.coerce
      .number({ error: "`limit` is a number of memories, 1 to 500." })
      .int()
      .min(1)
      .max(500)
      .default(200)
      .describe("At most this many memories (1 to 500; 200 by default)."),
  }),
);

export const MemoryChangeBody = z.lazy(() =>
  z
    .strictObject({
      text: z.string().min(1, "`text` is the memory's words: it cannot be empty.").optional(),
      type: z.enum(MEMORY_TYPES).optional(),
    })
    .refine((body) => body.text !== undefined || body.type !== undefined, "Give `text`, `type` or both: what to correct."),
);

export function registerMemoryRoutes(app: Hono<AppEnv>): void {
  app.get("/v1/me/memory", async (c) => {
    const query = readQuery(c, MemoryQueryParams);
    return c.json({ memories: await (await ownMemory(c)).list(query) });
  });
  app.patch("/v1/me/memory/:memoryId", async (c) => {
    const change = await readJson(c, MemoryChangeBody);
    const memory = await ownMemory(c);
    return c.json({ memory: answered(await memory.update(c.req.param("memoryId"), change, limitsOf(c))) });
  });
  app.delete("/v1/me/memory/:memoryId", async (c) => {
    const memory = await ownMemory(c);
    return c.json(answered(await memory.forget(c.req.param("memoryId"))));
  });
  app.delete("/v1/me/memory", async (c) => c.json(await (await ownMemory(c)).forgetAll()));
}

/** The signed-in user's memory; anyone else is refused, and a Worker that binds none says which binding to add. */
async function ownMemory(c: Context<AppEnv>): Promise<UserMemoryStore> {
  const access = c.get("access");
  if (access.kind !== "user")
    throw new HttpError("forbidden", "A memory is its user's alone: sign in as that user (no key or conversation token reads it).");
  const memory = await memoryOf(c.env, access.user.id);
  if (!memory)
    throw new HttpError(
      "memory_not_configured",
      "This Worker binds no memory: add the MEMORIES Durable Object binding (class UserMemory), or AGENT_MEMORY, to wrangler.toml.",
    );
  return memory;
}

function limitsOf(c: Context<AppEnv>) {
  const config = readConfig(c.env);
  return { maxChars: config.MEMORY_MAX_CHARS, maxPerUser: config.MEMORY_MAX_PER_USER };
}

function answered<T>(result: MemoryResult<T>): T {
  if (!result.ok) throw new HttpError(result.error.code, result.error.message);
  return result.value;
}
