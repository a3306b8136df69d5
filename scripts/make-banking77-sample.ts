/**
 * Writes examples/bank/banking77-sample.jsonl: a stratified sample of Banking77's test queries
 * (PolyAI, CC-BY-4.0), the first four of each of the 77 intents, as eval cases whose expected
 * holder is the specialist intents.ts maps the intent to.
 *
 *   node scripts/make-banking77-sample.ts <path to banking_data/test.csv> [per-intent]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { SPECIALIST_OF } from "../examples/bank/intents.ts";

const [csvPath, perIntent = "4"] = process.argv.slice(2);
if (!csvPath) throw new Error("Give the path of banking_data/test.csv (github.com/PolyAI-LDN/task-specific-datasets).");

/** The rows of a CSV file (RFC 4180: quoted fields may hold commas, quotes doubled, and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") row.push(field), (field = "");
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field), rows.push(row), (row = []), (field = "");
    } else field += ch;
  }
  if (field || row.length) row.push(field), rows.push(row);
  return rows;
}

const taken = new Map<string, number>();
const lines: string[] = [];
for (const [raw = "", intent = ""] of parseCsv(readFileSync(csvPath, "utf8")).slice(1)) {
  const text = raw.replace(/\s+/g, " ").trim();
  const specialist = SPECIALIST_OF[intent];
  if (!specialist) throw new Error(`No specialist for intent '${intent}': add it to examples/bank/intents.ts.`);
  const count = taken.get(intent) ?? 0;
  if (count >= Number(perIntent)) continue;
  taken.set(intent, count + 1);
  lines.push(
    JSON.stringify({
      id: `${intent}-${count + 1}`,
      tags: [intent],
      turns: [{ user: text, expect: { holder: specialist, maxHandoffs: 1 } }],
    }),
  );
}
writeFileSync("examples/bank/banking77-sample.jsonl", `${lines.join("\n")}\n`);
console.log(`wrote ${lines.length} cases over ${taken.size} intents`);
