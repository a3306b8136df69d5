/** Which store keeps a user's memory: Cloudflare's Agent Memory when AGENT_MEMORY is bound, else the MEMORIES object. */
import { AgentMemoryStore, type AgentMemoryNamespace } from "./agent-memory.ts";
import type { UserMemoryStore } from "./memory-store.ts";
import { type UserMemory, userMemoryObject } from "./user-memory.ts";
import { userObjectName } from "../user-object-name.ts";

/** The user's memory; undefined where neither is bound (then nothing is remembered beyond a conversation). */
export async function memoryOf(env: unknown, userId: string): Promise<UserMemoryStore | undefined> {
  const agentMemory = (env as { AGENT_MEMORY?: AgentMemoryNamespace }).AGENT_MEMORY;
  // A profile is named as the user's objects are (64 hex digits: within the service's 100 characters).
  if (agentMemory) return new AgentMemoryStore(agentMemory, await userObjectName(userId));
  const stub = await userMemoryObject(env, userId);
  return stub && objectStore(stub);
}

/**
 * The object's methods by name: a stub answers every property (as a remote method), so it cannot stand for the store
 * itself, whose `ingest` is there only where the backend reads conversations itself.
 */
function objectStore(stub: DurableObjectStub<UserMemory>): UserMemoryStore {
  return {
    recall: (query, options) => stub.recall(query, options),
    remember: (memory, limits) => stub.remember(memory, limits),
    readFrom: (conversation) => stub.readFrom(conversation),
    keepRead: (conversation, upTo, found, limits) => stub.keepRead(conversation, upTo, found, limits),
    list: (options) => stub.list(options),
    update: (id, change, limits) => stub.update(id, change, limits),
    forget: (id) => stub.forget(id),
    forgetAll: () => stub.forgetAll(),
  };
}
