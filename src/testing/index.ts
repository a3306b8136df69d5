/**
 * @module
 * Testing a network of your own, in Node or in workerd: a scripted model that fails on an
 * unexpected or unused step, an in-memory store that applies commits as the Durable Object does,
 * the stored-history validator, and `runScripted`, which runs a turn and returns its events and state.
 */
export { findHistoryProblem } from "../runtime/messages.ts";
export { MemoryFiles } from "./memory-files.ts";
export { MemoryStore } from "./memory-store.ts";
export { runScripted, type ScriptedTurn } from "./run-scripted.ts";
export { type RecordedRequest, type ScriptedCall, ScriptedModel, type ScriptStep } from "./scripted-model.ts";
// Every type of the run loop, as `handoff-runtime` exports them: the types this entry's signatures use among them.
export type * from "../runtime/index.ts";
