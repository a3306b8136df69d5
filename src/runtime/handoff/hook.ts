/** The network's `onHandoff` hook, run once per committed change of hands of a kind whose rules call it. */
import { errorMessage, RuntimeError } from "../errors.ts";
import type { Network } from "../network.ts";
import { HANDOFF_RULES } from "./change-hands.ts";
import type { HandoffKind, HandoffRecord } from "./types.ts";

/** The hook is caller code: a throw ends the turn (the handoff is already committed, the history valid). */
export async function runHandoffHook(network: Network, handoff: HandoffRecord, kind: HandoffKind): Promise<void> {
  if (!network.options.onHandoff || !HANDOFF_RULES[kind].hook) return;
  try {
    const reason = handoff.kind === "hand-back" ? handoff.note : "reason" in handoff ? handoff.reason : undefined;
    const input = handoff.kind === "transfer" ? handoff.input : undefined;
    await network.options.onHandoff({
      kind,
      from: handoff.from,
      to: handoff.to,
      ...(reason ? { reason } : {}),
      ...(input ? { input } : {}),
    });
  } catch (error) {
    throw new RuntimeError("hook_failed", `onHandoff failed: ${errorMessage(error)}`, { cause: error });
  }
}
