/** The network's `onHandoff` hook, run once per accepted handoff. */
import { RuntimeError } from "../errors.ts";
import type { Network } from "../network.ts";
import type { HandoffRecord } from "./types.ts";

/** The hook is caller code: a throw ends the turn (the handoff is already committed, the history valid). */
export async function runHandoffHook(network: Network, handoff: HandoffRecord): Promise<void> {
  if (!network.options.onHandoff) return;
  try {
    await network.options.onHandoff({
      from: handoff.from,
      to: handoff.to,
      ...(handoff.reason ? { reason: handoff.reason } : {}),
      ...(handoff.input ? { input: handoff.input } : {}),
    });
  } catch (error) {
    throw new RuntimeError("hook_failed", `onHandoff failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
