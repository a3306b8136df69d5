/**
 * The architecture as rules, checked by `npm test` (`npm run check:architecture`). The run loop in
 * src/runtime is pure TypeScript that everything else depends on, never the reverse; adapters
 * (models, agents) sit beside the Durable Objects (conversation, inbox, desk), the traces below
 * them all, and the HTTP layer on top.
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
      name: "runtime-wait-below-the-step",
      comment:
        "src/runtime/wait (what a run waits for: the kinds of request, decisions, asks, checks) is read by tools, ports and the step; it imports none of them, so no two runtime rooms import each other.",
      severity: "error",
      from: { path: "^src/runtime/wait/" },
      to: { path: "^src/runtime/(tools|step|ports|handoff)/" },
    },
    {
      name: "runtime-ports-below-tools-and-step",
      comment: "src/runtime/ports (what a host plugs in) imports no tool and no stage of a step: tools and the step read the ports.",
      severity: "error",
      from: { path: "^src/runtime/ports/" },
      to: { path: "^src/runtime/(tools|step)/" },
    },
    {
      name: "adapters-below-objects-and-http",
      comment: "src/models, src/agents and the A2A client import no Durable Object's folder and not src/http.",
      severity: "error",
      from: { path: "^src/(models|agents|a2a/(?!server/))" },
      to: { path: "^src/(conversation|inbox|desk|http)/" },
    },
    {
      name: "objects-below-http",
      comment: "The Durable Objects' folders (conversation, inbox, desk) and the traces do not import src/http.",
      severity: "error",
      from: { path: "^src/(conversation|inbox|desk|traces)/" },
      to: { path: "^src/http/" },
    },
    {
      name: "objects-hand-out-one-framing",
      comment:
        "A conversation hands its events out once, as SSE frames (src/wire/sse.ts): the AI SDK's stream, A2A and AG-UI are encoded at the edge, so src/conversation imports nothing of src/wire but the framing and the history's shape.",
      severity: "error",
      from: { path: "^src/conversation/" },
      to: { path: "^src/wire/(?!(sse|client-history)\\.ts$)" },
    },
    {
      name: "traces-and-evals-need-no-object",
      comment: "src/traces (trace builder, OTLP export) and src/evals reach into no Durable Object's folder: the Worker and the evals share them.",
      severity: "error",
      from: { path: "^src/(traces|evals)/" },
      to: { path: "^src/(conversation|inbox|desk)/" },
    },
    {
      name: "inbox-and-desk-stand-alone",
      comment: "The inbox and the operator desk are objects of their own: they import nothing of the conversation's.",
      severity: "error",
      from: { path: "^src/(inbox|desk)/" },
      to: { path: "^src/conversation/" },
    },
    {
      name: "worker-uses-entry-points",
      comment: "This repository's Worker (src/index.ts, src/agents) uses the package as a team's Worker would: through its entry points only.",
      severity: "error",
      from: { path: "^src/(index\\.ts|agents/)" },
      to: { path: "^src/", pathNot: ["^src/(runtime|cloudflare|models|testing|mcp|router)/index\\.ts$", "^src/agents/"] },
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
