/** Deciding a turn's wait the way the conversation does (the store's one path for every run's wait), for tests that drive a store. */
import type { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { TURN_START } from "../../src/runtime/turn-progress.ts";
import type { Decision } from "../../src/runtime/wait/requests.ts";
import type { Suspension } from "../../src/runtime/wait/suspension.ts";

/** Decisions on the turn's own wait; `resume`: its leg starts. */
export function decideTurn(store: ConversationStore, decisions: Decision[], resume: boolean): void {
  const wait = store.runs.waits().find((w) => w.id === undefined);
  if (!wait) throw new Error("The turn does not wait.");
  store.decide([{ wait, decisions }], undefined, resume);
}

/** A step of triage's suspended on approvals of `ids`' refunds. */
export function waitingOn(...ids: string[]): Suspension {
  const calls = ids.map((id) => ({ id, name: "refund", arguments: "{}" }));
  return {
    assistant: { role: "assistant", agent: "triage", content: null, toolCalls: calls },
    results: ids.map(() => null),
    pending: ids.map((toolCallId) => ({ kind: "approval", toolCallId, name: "refund", args: {}, agent: "triage" })),
    progress: TURN_START,
    trailing: [],
  };
}
