/** Banking77's CSV files (PolyAI, CC BY 4.0; SOURCE.md), read as their rows. */
import { readFileSync } from "node:fs";

/** The rows of a CSV file (RFC 4180: quoted fields may hold commas, quotes doubled, and line breaks). */
export function parseCsv(text: string): string[][] {
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

/** A split's queries (`text`, whitespace folded) and intents, header left out. */
export function readQueries(path: string): Array<{ text: string; intent: string }> {
  return parseCsv(readFileSync(path, "utf8"))
    .slice(1)
    .filter((row) => row.length === 2 && row[0])
    .map(([text = "", intent = ""]) => ({ text: text.replace(/\s+/g, " ").trim(), intent: intent.trim() }));
}
