/**
 * Writes examples/bank/banking77-sample.jsonl: a stratified sample of Banking77's test queries
 * (PolyAI, CC-BY-4.0), the first four of each of the 77 intents, as eval cases whose expected
 * holder is the specialist intents.ts maps the intent to.
 *
 *   node scripts/make-banking77-sample.ts <path to banking_data/test.csv> [per-intent|all] [out.jsonl]
 *
 * With `all`, every query of the split: `examples/bank/banking77-test.jsonl` is the whole test split,
 * made so (the example eval runs it); `npm run router:example` makes the train split's the same way,
 * under test-artifacts/, to train examples/bank/router.json on.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { readQueries } from "../examples/bank/csv.ts";
import { SPECIALIST_OF } from "../examples/bank/intents.ts";

const [csvPath, perIntent = "4", out = "examples/bank/banking77-sample.jsonl"] = process.argv.slice(2);
const limit = perIntent === "all" ? Number.POSITIVE_INFINITY : Number(perIntent);
if (!csvPath) throw new Error("Give the path of banking_data/test.csv (github.com/PolyAI-LDN/task-specific-datasets).");

const taken = new Map<string, number>();
const lines: string[] = [];
for (const { text, intent } of readQueries(csvPath)) {
  const specialist = SPECIALIST_OF[intent];
  if (!specialist) throw new Error(`No specialist for intent '${intent}': add it to examples/bank/intents.ts.`);
  const count = taken.get(intent) ?? 0;
  if (count >= limit) continue;
  taken.set(intent, count + 1);
  lines.push(
    JSON.stringify({
      id: `${intent}-${count + 1}`,
      tags: [intent],
      turns: [{ user: text, expect: { holder: specialist, maxHandoffs: 1 } }],
    }),
  );
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} cases over ${taken.size} intents`);
