/**
 * The public API of each entry point, as API Extractor reports it, in api/*.api.md. `npm test`
 * runs this in check mode after building: a change to the public surface fails it unless the
 * report is updated in the same commit (`npm run api:update`). Every name an entry point exports
 * needs a doc comment; the members of exported types are read through them, and need none. Every
 * type an exported signature uses is exported from the same entry (no `ae-forgotten-export`).
 */
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from "@microsoft/api-extractor";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = fileURLToPath(new URL("..", import.meta.url));
const update = process.argv.includes("--update");
const ENTRIES: Record<string, string> = {
  "handoff-runtime": "runtime/index.d.ts",
  "handoff-runtime-cloudflare": "cloudflare/index.d.ts",
  "handoff-runtime-openai": "models/index.d.ts",
  "handoff-runtime-testing": "testing/index.d.ts",
  "handoff-runtime-mcp": "mcp/index.d.ts",
  "handoff-runtime-evals": "evals/index.d.ts",
  "handoff-runtime-router": "router/index.d.ts",
};

mkdirSync(`${root}api`, { recursive: true });
let failed = false;
for (const [name, entry] of Object.entries(ENTRIES)) {
  const configObject: IConfigFile = {
    projectFolder: root,
    mainEntryPointFilePath: `<projectFolder>/dist/${entry}`,
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: "ES2023",
          module: "ESNext",
          moduleResolution: "Bundler",
          lib: ["ES2023"],
          types: ["@cloudflare/workers-types"],
          strict: true,
          skipLibCheck: true,
        },
        files: [`dist/${entry}`],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: `${name}.api.md`,
      reportFolder: "<projectFolder>/api/",
      reportTempFolder: "<projectFolder>/.api-tmp/",
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning },
        "ae-missing-release-tag": { logLevel: ExtractorLogLevel.None },
        "ae-undocumented": { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        // Every type an entry's signatures use is exported from that entry: a forgotten one fails the check.
        "ae-forgotten-export": { logLevel: ExtractorLogLevel.Error, addToApiReportFile: false },
      },
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
  const config = ExtractorConfig.prepare({ configObject, configObjectFullPath: undefined, packageJsonFullPath: `${root}package.json` });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false });
  if (!result.succeeded) {
    failed = true;
    console.error(
      `${name}: ${result.errorCount} errors, ${result.warningCount} warnings${result.apiReportChanged ? "; the API changed: run npm run api:update and commit api/" : ""}`,
    );
  }
}
const undocumented = undocumentedExports(Object.values(ENTRIES).map((entry) => `${root}dist/${entry}`));
for (const name of undocumented) console.error(`undocumented export: ${name} (give it a doc comment in src/)`);
process.exit(failed || undocumented.length > 0 ? 1 : 0);

/** Exported names whose declaration carries no /** doc comment *\/, as entry:name. */
function undocumentedExports(entries: string[]): string[] {
  const program = ts.createProgram(entries, {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2023,
    types: [],
  });
  const checker = program.getTypeChecker();
  const missing: string[] = [];
  for (const entry of entries) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const documented = (symbol.declarations ?? []).some(
        (d) => ts.getJSDocCommentsAndTags(d).length > 0 || /\/\*\*/.test(d.getFullText().slice(0, d.getLeadingTriviaWidth())),
      );
      if (!documented) missing.push(`${entry.slice(root.length + 5)}:${exported.name}`);
    }
  }
  return missing;
}
