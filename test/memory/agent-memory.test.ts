/**
 * The Agent Memory adapter (AGENT_MEMORY) against a stand-in of Cloudflare's Agent Memory Workers API as its docs describe
 * it: a profile per user made on first use, `remember` classifying and summarizing, `recall` answering scored candidates,
 * `list` without contents, `get` and `delete` throwing for a memory that is not there, `ingest` idempotent per session,
 * `deleteProfile` marking everything gone.
 */
import { describe, expect, it } from "vitest";
import type { AgentMemoryMemory, AgentMemoryNamespace, AgentMemoryProfile } from "../../src/memory/agent-memory.ts";
import { memoryOf } from "../../src/memory/memory-of.ts";

class StandInProfile implements AgentMemoryProfile {
  readonly memories = new Map<string, AgentMemoryMemory>();
  readonly ingested: Array<{ sessionId: string | null | undefined; contents: string[] }> = [];
  readonly queries: string[] = [];
  async ingest(messages: Iterable<{ role: string; content: string }>, options?: { sessionId?: string | null }): Promise<void> {
    const contents = [...messages].map((m) => m.content);
    if (this.ingested.some((i) => i.sessionId === options?.sessionId && i.contents.join() === contents.join())) return;
    this.ingested.push({ sessionId: options?.sessionId, contents });
  }
  async remember(memory: { content: string; sessionId?: string | null }): Promise<AgentMemoryMemory> {
    const now = new Date();
    const kept = {
      id: `am-${this.memories.size + 1}`,
      type: "fact" as const,
      summary: memory.content,
      content: memory.content,
      sessionId: memory.sessionId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    this.memories.set(kept.id, kept);
    return kept;
  }
  async recall(query: string) {
    if (new TextEncoder().encode(query).length > 1024) throw new Error("query larger than 1 KB");
    this.queries.push(query);
    const words = query.toLowerCase().split(/\W+/).filter(Boolean);
    const candidates = [...this.memories.values()]
      .map((m) => ({
        id: m.id,
        summary: m.summary,
        sessionId: m.sessionId,
        score: words.filter((w) => m.summary.toLowerCase().includes(w)).length,
      }))
      .filter((c) => c.score > 0);
    return { count: candidates.length, answer: candidates.map((c) => c.summary).join(" "), candidates };
  }
  async list(options?: { limit?: number }) {
    return { memories: [...this.memories.values()].slice(0, options?.limit ?? 20).map(({ content: _content, ...entry }) => entry) };
  }
  async get(id: string): Promise<AgentMemoryMemory> {
    const memory = this.memories.get(id);
    if (!memory) throw new Error(`memory ${id} not found`);
    return memory;
  }
  async delete(id: string): Promise<AgentMemoryMemory> {
    const memory = await this.get(id);
    this.memories.delete(id);
    return memory;
  }
}

class StandInNamespace implements AgentMemoryNamespace {
  readonly profiles = new Map<string, StandInProfile>();
  async getProfile(name: string): Promise<AgentMemoryProfile> {
    if (name.length > 100) throw new Error("profile name longer than 100 characters");
    if (!this.profiles.has(name)) this.profiles.set(name, new StandInProfile());
    return this.profiles.get(name)!;
  }
  async deleteProfile(name: string): Promise<void> {
    this.profiles.delete(name);
  }
}

const limits = { maxChars: 500, maxPerUser: 100 };

describe("a user's memory in Agent Memory", () => {
  it("keeps, recalls, lists, corrects and forgets through a profile of the user's own", async () => {
    const namespace = new StandInNamespace();
    const ada = (await memoryOf({ AGENT_MEMORY: namespace }, "ada@example.com"))!;
    const bob = (await memoryOf({ AGENT_MEMORY: namespace }, "bob"))!;
    const kept = await ada.remember(
      { text: "Prefers to be written to in French", type: "preference", source: { conversation: "c1" } },
      limits,
    );
    expect(kept).toMatchObject({
      ok: true,
      value: { text: "Prefers to be written to in French", type: "preference", source: { conversation: "c1" } },
    });
    expect([...namespace.profiles.keys()][0]).toMatch(/^[0-9a-f]{64}$/);
    expect(await bob.list()).toEqual([]);

    const recalled = await ada.recall("write in french please", { limit: 5, maxTokens: 100 });
    expect(recalled.map((m) => m.text)).toEqual(["Prefers to be written to in French"]);
    expect(await ada.recall("   ")).toEqual([]);
    // A query past the service's 1 KB is cut to it, not refused.
    expect(await ada.recall(`french ${"é".repeat(800)}`)).toHaveLength(1);

    const id = kept.ok ? kept.value.id : "";
    const corrected = await ada.update(id, { text: "Prefers German" }, limits);
    expect(corrected).toMatchObject({ ok: true, value: { text: "Prefers German" } });
    expect((await ada.list()).map((m) => m.text)).toEqual(["Prefers German"]);
    expect(await ada.update(id, { text: "again" }, limits)).toMatchObject({ ok: false, error: { code: "memory_not_found" } });
    expect(await ada.remember({ text: "z".repeat(501), type: "fact", source: { conversation: "c1" } }, limits)).toMatchObject({
      ok: false,
      error: { code: "memory_limit" },
    });

    expect(await ada.forget(corrected.ok ? corrected.value.id : "")).toEqual({ ok: true, value: { forgotten: 1 } });
    expect(await ada.forget("nope")).toMatchObject({ ok: false, error: { code: "memory_not_found" } });
    await ada.remember({ text: "Their order is A1001", type: "fact", source: { conversation: "c2" } }, limits);
    expect(await ada.forgetAll()).toEqual({ forgotten: 1 });
    expect(await ada.list()).toEqual([]);
  });

  it("hands whole conversations to the service to read (it extracts itself), once per session and messages", async () => {
    const namespace = new StandInNamespace();
    const ada = (await memoryOf({ AGENT_MEMORY: namespace }, "ada"))!;
    const messages = [
      { role: "user" as const, content: "My order is A1001" },
      { role: "assistant" as const, content: "Noted." },
    ];
    await ada.ingest!(messages, "conversation-1");
    await ada.ingest!(messages, "conversation-1");
    const profile = [...namespace.profiles.values()][0]!;
    expect(profile.ingested).toEqual([{ sessionId: "conversation-1", contents: ["My order is A1001", "Noted."] }]);
    expect(await ada.readFrom("conversation-1")).toBe(0);
  });
});
