/** The network's `onHandoff` hook, run once per accepted handoff. */
import { errorMessage, RuntimeError } from "../errors.ts";
import type { Network } from "../network.ts";
import type { HandoffRecord } from "./types.ts";

/** The hook is caller code: a throw ends the turn (the handoff is already committed, the history valid). */
export async function runHandoffHook(network: Network, handoff: HandoffRecord): Promise<void> {
  if (!network.options.onHandoff) return;
  try {
    const reason = "reason" in handoff ? handoff.reason : undefined;
    const input = handoff.kind === "transfer" ? handoff.input : undefined;
    await network.options.onHandoff({ from: handoff.from, to: handoff.to, ...(reason ? { reason } : {}), ...(input ? { input } : {}) });
  } catch (error) {
    throw new RuntimeError("hook_failed", `onHandoff failed: ${errorMessage(error)}`, { cause: error });
  }
}
