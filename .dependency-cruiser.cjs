/**
 * The architecture as rules, checked by `npm test` (`npm run check:architecture`). The run loop in
 * src/runtime is pure TypeScript that everything else depends on, never the reverse; adapters
 * (models, agents) sit beside the session, and the HTTP layer on top.
 */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment: "Modules in src/ form no import cycle, type-only imports included.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "runtime-is-pure",
      comment: "src/runtime imports nothing from Cloudflare, Hono or OpenAI, and no other src/ folder: it runs and is tested anywhere.",
      severity: "error",
      from: { path: "^src/runtime/" },
      to: { path: ["^cloudflare:", "(^|/)node_modules/(hono|openai)/", "^src/(?!runtime/)"] },
    },
    {
      name: "adapters-below-session-and-http",
      comment: "src/models and src/agents do not import src/session or src/http.",
      severity: "error",
      from: { path: "^src/(models|agents)/" },
      to: { path: "^src/(session|http)/" },
    },
    {
      name: "session-below-http",
      comment: "src/session does not import src/http.",
      severity: "error",
      from: { path: "^src/session/" },
      to: { path: "^src/http/" },
    },
    {
      name: "worker-uses-entry-points",
      comment: "This repository's Worker (src/index.ts, src/agents) uses the package as a team's Worker would: through its entry points only.",
      severity: "error",
      from: { path: "^src/(index\\.ts|agents/)" },
      to: { path: "^src/", pathNot: ["^src/(runtime|cloudflare|models|testing|mcp)/index\\.ts$", "^src/agents/"] },
    },
    {
      name: "no-node-builtins",
      comment: "The Worker runs without nodejs_compat: web standards only.",
      severity: "error",
      from: { path: "^src/" },
      to: { dependencyTypes: ["core"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
