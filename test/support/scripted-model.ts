/** The scripted model and memory store the package ships for testing (`handoff-runtime/testing`). */
export { MemoryStore, type RecordedRequest, type ScriptedCall, ScriptedModel, type ScriptStep } from "../../src/testing/index.ts";
