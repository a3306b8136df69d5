/**
 * What tracing costs a turn, side by side in one run: two `wrangler dev`s on one fake provider,
 * one with tracing off (`TRACE_TURNS=0`, no collector) and one with traces kept and exported to an
 * OTLP collector (the fake server's receiver). Turns alternate between them and between two kinds
 * (plain text; a tool call then text); each turn's time to first token and the rows and bytes it
 * wrote (from the SQL cursors' rowsWritten, as the Durable Object reports them) are compared.
 *
 *   node bench/tracing.ts [-- --turns 20]
 */
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { median } from "./loop-overhead.ts";

const TEXT = Array.from({ length: 40 }, (_, i) => `w${String(i).padStart(2, "0")} `).join("");
const KINDS = ["text", "tool then text"] as const;

interface Turn {
  kind: (typeof KINDS)[number];
  ttftMs: number;
  rows: number;
  bytes: number;
}

/** Sends one message and times its first text delta. */
async function timedTurn(dev: WranglerDev, conversation: string, message: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(`${dev.url}/v1/conversations/${conversation}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message }),
  });
  let first = Number.NaN;
  let body = "";
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    body += decoder.decode(bytes, { stream: true });
    if (Number.isNaN(first) && body.includes("event: text-delta")) first = performance.now() - start;
  }
  if (!body.includes('"status":"completed"')) throw new Error(`a turn did not complete: ${body.slice(-300)}`);
  return first;
}

export async function tracingRows(persistTo: string, turns = 20): Promise<string[]> {
  const fake = await startFakeOpenAI();
  const provider = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000" };
  const off = await startWranglerDev({ persistTo: `${persistTo}-off`, vars: { ...provider, TRACE_TURNS: "0" } });
  const on = await startWranglerDev({
    persistTo: `${persistTo}-on`,
    vars: { ...provider, OTEL_EXPORTER_OTLP_ENDPOINT: `${fake.url}/otlp/bench` },
  });
  const results = { off: [] as Turn[], on: [] as Turn[] };
  try {
    for (const [side, dev] of [
      ["off", off],
      ["on", on],
    ] as const) {
      // The first turn hands the conversation to billing, which answers the rest, with its lookup tool every other turn.
      const answers = [
        { toolCalls: [{ name: "transfer_to_billing", arguments: "{}" }] },
        { text: TEXT },
        ...Array.from({ length: turns - 1 }, (_, i) =>
          KINDS[(i + 1) % 2] === "text"
            ? [{ text: TEXT, delayMs: 1 }]
            : [{ toolCalls: [{ name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] }, { text: TEXT, delayMs: 1 }],
        ).flat(),
      ];
      await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id: `scntracing${side}`, answers }) });
      await timedTurn(dev, `tracing-${side}`, `warm up [scntracing${side}]`);
    }
    for (let i = 1; i < turns; i++) {
      for (const [side, dev] of [
        ["off", off],
        ["on", on],
      ] as const) {
        const ttftMs = await timedTurn(dev, `tracing-${side}`, `message ${i}`);
        const view = (await (await fetch(`${dev.url}/v1/conversations/tracing-${side}`)).json()) as {
          lastTurnStorage: { rowsWritten: number; bytesWritten: number };
        };
        results[side].push({
          kind: KINDS[i % 2]!,
          ttftMs,
          rows: view.lastTurnStorage.rowsWritten,
          bytes: view.lastTurnStorage.bytesWritten,
        });
      }
    }
  } finally {
    await off.stop();
    await on.stop();
  }
  const exported = (await (await fetch(`${fake.url}/otlp/bench`)).json()) as Array<{ decoded?: { spans: unknown[] } }>;
  await fake.close();
  const of = (side: "off" | "on", kind: string, pick: (t: Turn) => number) =>
    median(results[side].filter((t) => t.kind === kind).map(pick));
  const row = (label: string, kind: string, pick: (t: Turn) => number, unit: string) => {
    const [a, b] = [of("off", kind, pick), of("on", kind, pick)];
    return `| ${label} (${kind}) | ${a.toFixed(1)}${unit} | ${b.toFixed(1)}${unit} | ${(b / a).toFixed(2)}× |`;
  };
  return [
    `Tracing on (traces kept, exported as OTLP to a collector) against off (\`TRACE_TURNS=0\`, no collector): ${turns - 1} turns each, alternating, medians`,
    "",
    "| | tracing off | tracing on, exported | on / off |",
    "|---|---:|---:|---:|",
    ...KINDS.flatMap((kind) => [
      row("time to first token", kind, (t) => t.ttftMs, " ms"),
      row("rows written per turn", kind, (t) => t.rows, ""),
      row("bytes written per turn", kind, (t) => t.bytes, ""),
    ]),
    "",
    `The collector received ${exported.filter((e) => e.decoded).length} exports holding ${exported.reduce((n, e) => n + (e.decoded?.spans.length ?? 0), 0)} spans.`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "handoff-bench-tracing-"));
  try {
    console.log((await tracingRows(join(dir, "dev"), Number(process.argv[process.argv.indexOf("--turns") + 1]) || 20)).join("\n"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
