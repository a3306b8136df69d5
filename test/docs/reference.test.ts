/**
 * docs/agents.md held to the types it documents: each of its tables lists every field of its type
 * as the package exports it, optional ones marked `?`, and nothing else. The types are read with
 * the TypeScript compiler from src/runtime/index.ts, so a new option without a row (or a row for an
 * option that is gone) fails here.
 */
import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname;
const page = readFileSync(`${root}docs/agents.md`, "utf8");

const entry = `${root}src/runtime/index.ts`;
const program = ts.createProgram([entry], {
  allowImportingTsExtensions: true,
  noEmit: true,
  strict: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
});
const checker = program.getTypeChecker();
const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!);

/** The fields of an exported interface, each `name` or `name?`. */
function fieldsOf(typeName: string): string[] {
  const found = exported.find((symbol) => symbol.name === typeName);
  expect(found, `src/runtime/index.ts exports ${typeName}`).toBeDefined();
  const symbol = found!.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(found!) : found!;
  return checker
    .getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))
    .map((property) => `${property.name}${property.flags & ts.SymbolFlags.Optional ? "?" : ""}`);
}

/** The first cells of the table under `heading`, each the one name in its backticks. */
function rowsUnder(heading: string): string[] {
  const lines = page.split("\n");
  const start = lines.indexOf(heading);
  expect(start, `docs/agents.md has "${heading}"`).toBeGreaterThanOrEqual(0);
  const first = lines.findIndex((line, i) => i > start && line.startsWith("|"));
  const rows: string[] = [];
  for (let i = first + 2; i < lines.length && lines[i]!.startsWith("|"); i++) rows.push(/^\| `([^`]+)`/.exec(lines[i]!)?.[1] ?? lines[i]!);
  return rows;
}

describe("docs/agents.md lists every field of the types it documents, and no other", () => {
  it.each([
    ["## `new Agent(config)`", "AgentConfig"],
    ["## `tool(definition)`", "Tool"],
    ["## `ctx`: what `execute` receives", "ToolContext"],
    ["## `handoff(agent, options)`", "HandoffOptions"],
    ["## `modelSettings`", "ModelSettings"],
  ])("%s: %s", (heading, typeName) => {
    const rows = rowsUnder(heading);
    expect(rows).toHaveLength(new Set(rows).size);
    expect([...rows].sort()).toEqual(fieldsOf(typeName).sort());
  });
});
