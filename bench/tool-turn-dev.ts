/**
 * This project's side of the peer bench (bench/peers/ours: one agent and `lookup_order`) under
 * `wrangler dev` on the fake provider, its scenario seeded with `answers` turns of a tool call and
 * an answer: the set-up bench:cpu and bench:native share.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";

const TOOL_TURN = [
  { toolCalls: [{ name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
  { text: "Order A1001 shipped; it was charged twice." },
];

export interface ToolTurnDev {
  dev: WranglerDev;
  /** The Worker's variables (the fake provider's address), for another dev of the same Worker. */
  vars: Record<string, string>;
  scratch: string;
  stop(): Promise<void>;
}

export async function startToolTurnDev(options: {
  name: string;
  scenario: string;
  answers: number;
  config?: string;
}): Promise<ToolTurnDev> {
  const fake = await startFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), `bench-${options.name}-`));
  const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" };
  const config = options.config ?? new URL("./peers/ours/wrangler.toml", import.meta.url).pathname;
  const dev = await startWranglerDev({ persistTo: scratch, vars, config });
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({ id: options.scenario, answers: Array.from({ length: options.answers }, () => TOOL_TURN).flat() }),
  });
  return {
    dev,
    vars,
    scratch,
    async stop() {
      await dev.stop();
      await fake.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
