/**
 * The outputs of an eval run: a table for the terminal, and a static HTML report (no scripts from
 * anywhere, no CDN): the scores, the confusion matrix as a heat map, accuracy per agent, and every
 * failed case first with its transcript, its handoff path and its trace (the trace builder's spans, as a waterfall).
 */
import type { Span, TurnTrace } from "../traces/turn-trace.ts";
import type { EvalSample } from "./runner.ts";
import type { Comparison, Scores } from "./scores.ts";

const pct = (value: number) => `${(value * 100).toFixed(1)}%`;

/** The scores as lines for the terminal. */
export function scoreTable(scores: Scores, comparison?: Comparison): string {
  const rows: Array<[string, string]> = [
    ["cases × samples", `${scores.cases} × ${scores.k}`],
    ["routing accuracy (turns)", `${pct(scores.routing.accuracy)} (${scores.routing.correct}/${scores.routing.turns})`],
    [`pass^${scores.k}`, `${pct(scores.passAtK.rate)} (${scores.passAtK.passed}/${scores.passAtK.cases} cases)`],
    ["handoffs per case", scores.handoffsPerCase.toFixed(2)],
    ["refused transfers per case", scores.refusedPerCase.toFixed(2)],
    ["announced but unmade handoffs", String(scores.announcedHandoffs)],
    ["tokens in / out", `${scores.tokens.input} / ${scores.tokens.output}`],
    ["cost", scores.cost === null ? "(no price table)" : `$${scores.cost.toFixed(4)}`],
    ["latency p50 / p95", `${scores.latencyMs.p50.toFixed(0)} ms / ${scores.latencyMs.p95.toFixed(0)} ms`],
    ["provider errors", String(scores.providerErrors)],
  ];
  if (comparison)
    rows.push([
      "A/B routing accuracy",
      `${pct(comparison.a)} → ${pct(comparison.b)}: ${comparison.difference >= 0 ? "+" : ""}${pct(comparison.difference)} ` +
        `(95% CI ${pct(comparison.interval[0])} to ${pct(comparison.interval[1])}${comparison.significant ? "" : ", could be noise"})`,
    ]);
  const width = Math.max(...rows.map(([label]) => label.length));
  const agents = scores.perAgent.map(
    (a) =>
      `  ${a.agent.padEnd(width - 2)}  precision ${pct(a.precision).padStart(6)}  ` +
      `recall ${pct(a.recall).padStart(6)}  (${a.correct}/${a.expected})`,
  );
  return [...rows.map(([label, value]) => `${label.padEnd(width)}  ${value}`), "per expected agent:", ...agents].join("\n");
}

const escape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** A whole HTML page: open it in any browser, offline. */
export function htmlReport(samples: readonly EvalSample[], scores: Scores, title = "Handoff eval", comparison?: Comparison): string {
  const failed = samples.filter((s) => !s.pass);
  const ordered = [...failed, ...samples.filter((s) => s.pass)];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem;color:#111}
h1{font-size:1.4rem}
h2{font-size:1.1rem;margin-top:2rem}
table{border-collapse:collapse}
td,th{padding:.25rem .5rem;text-align:right}
th{font-weight:600}
.summary td:first-child,.agents td:first-child{text-align:left;color:#555}
.heat td{width:3.2rem;height:2rem;text-align:center;border:1px solid #fff}
.heat th.row{text-align:right}
.heat th.col{writing-mode:vertical-rl;transform:rotate(180deg);height:6rem;vertical-align:bottom}
.bar{display:inline-block;height:.7rem;background:#2563eb;vertical-align:middle}
.case{border:1px solid #ddd;border-radius:.4rem;margin:.6rem 0;padding:.5rem .8rem}
.case.fail{border-color:#dc2626}
.case summary{cursor:pointer}
.fails{color:#dc2626}
.path{color:#555}
.msg{margin:.2rem 0;white-space:pre-wrap}
.msg b{color:#555;font-weight:600}
.trace{font:12px ui-monospace,monospace;color:#444;background:#f7f7f7;margin:.4rem 0;width:100%}
.trace caption{text-align:left;color:#555}
.trace td:first-child,.trace th:first-child,.trace td.facts{text-align:left}
.trace td.lane{width:30%;text-align:left}
.span-bar{display:block;height:.6rem;background:#64748b}
.k-model{background:#2563eb}
.k-tool{background:#16a34a}
.k-handoff,.k-refused-handoff{background:#d97706}
.k-agent{background:#a5b4fc}
</style></head><body>
<h1>${escape(title)}</h1>
${summaryTable(scores, comparison)}
<h2>Confusion matrix <small>(rows: expected holder, columns: actual)</small></h2>
${heatMap(scores)}
<h2>Accuracy per expected agent</h2>
${agentTable(scores)}
<h2>Cases <small>(${failed.length} failed first, then ${samples.length - failed.length} passed)</small></h2>
${ordered.map(caseBlock).join("\n")}
</body></html>
`;
}

function summaryTable(scores: Scores, comparison?: Comparison): string {
  const rows = scoreTable(scores, comparison)
    .split("\n")
    .filter((line) => !line.startsWith(" ") && !line.startsWith("per expected agent"))
    .map((line) => {
      const [label, ...rest] = line.split(/ {2,}/);
      return `<tr><td>${escape(label ?? "")}</td><td data-testid="score">${escape(rest.join(" "))}</td></tr>`;
    });
  return `<table class="summary" data-testid="summary">${rows.join("")}</table>`;
}

function heatMap(scores: Scores): string {
  const { labels, counts } = scores.confusion;
  const max = Math.max(1, ...counts.flat());
  const header = `<tr><th></th>${labels.map((l) => `<th class="col">${escape(l)}</th>`).join("")}</tr>`;
  const rows = labels.map((row, i) => {
    const cells = counts[i]!.map((n, j) => {
      const hue = i === j ? "37,99,235" : "220,38,38";
      const style = `background:rgba(${hue},${(n / max).toFixed(3)});color:${n / max > 0.55 ? "#fff" : "#111"}`;
      return `<td title="expected ${escape(row)}, held by ${escape(labels[j]!)}: ${n}" style="${style}">${n || ""}</td>`;
    });
    return `<tr><th class="row">${escape(row)}</th>${cells.join("")}</tr>`;
  });
  return `<table class="heat" data-testid="confusion">${header}${rows.join("")}</table>`;
}

function agentTable(scores: Scores): string {
  const rows = scores.perAgent.map(
    (a) =>
      `<tr><td>${escape(a.agent)}</td><td>${pct(a.recall)} <span class="bar" style="width:${(a.recall * 8).toFixed(2)}rem"></span></td>` +
      `<td>${pct(a.precision)}</td><td>${a.correct}/${a.expected}</td></tr>`,
  );
  const head = "<tr><th></th><th>recall</th><th>precision</th><th>right</th></tr>";
  return `<table class="agents" data-testid="agents">${head}${rows.join("")}</table>`;
}

function caseBlock(sample: EvalSample): string {
  const failures = sample.turns.flatMap((t, i) => t.failures.map((f) => `turn ${i + 1}: ${f}`));
  const transcript = sample.transcript
    .flatMap((m) => (m.role === "user" ? [["user", m.content]] : m.role === "assistant" && m.content ? [[m.agent, m.content]] : []))
    .map(([who, text]) => `<div class="msg"><b>${escape(who ?? "")}</b> ${escape(text ?? "")}</div>`)
    .join("");
  const trace = sample.turns.map((t, i) => traceTable(t.trace, i + 1)).join("");
  const open = sample.pass ? `class="case" data-testid="passed-case"` : `class="case fail" open data-testid="failed-case"`;
  const verdict = sample.pass ? "passed" : `<span class="fails">${escape(sample.error ?? failures.join("; "))}</span>`;
  return `<details ${open}>
<summary><b>${escape(sample.caseId)}</b>${sample.sample ? ` (sample ${sample.sample + 1})` : ""} ${verdict}</summary>
<p class="path">handoff path: ${escape(sample.path.join(" → "))}${routedNote(sample)}</p>${transcript}${trace}</details>`;
}

/** Which turns a router handed on with no model call, and how sure it was. */
function routedNote(sample: EvalSample): string {
  const routed = sample.turns.flatMap((t, i) => {
    const span = t.trace.spans.find((s) => s.attributes["router.name"] !== undefined);
    return span
      ? [`turn ${i + 1} by the ${span.attributes["router.name"]} router (${Number(span.attributes["router.confidence"]).toFixed(2)})`]
      : [];
  });
  return routed.length ? ` <span data-testid="routed">· routed with no model call: ${escape(routed.join(", "))}</span>` : "";
}

/** Attributes worth a glance in a span's row (the rest are ids). */
const SHOWN: Record<string, string> = {
  timeToFirstTokenMs: "first token ms",
  "gen_ai.usage.input_tokens": "in",
  "gen_ai.usage.output_tokens": "out",
  "gen_ai.response.finish_reasons": "finish",
  retries: "retries",
  reason: "reason",
  error: "error",
  denied: "denied",
  "handoff.announced_not_made": "announced, not made",
  status: "status",
};

/** One turn's spans as a waterfall: each span indented under its parent, a bar placed in the turn's time. */
function traceTable(trace: TurnTrace, turn: number): string {
  const root = trace.spans.find((s) => s.parentId === null || !trace.spans.some((p) => p.id === s.parentId));
  const start = root?.start ?? 0;
  const total = Math.max(1, (root?.end ?? start) - start);
  const depth = (span: Span): number => {
    const parent = trace.spans.find((p) => p.id === span.parentId);
    return parent ? depth(parent) + 1 : 0;
  };
  const rows = trace.spans.map((span) => {
    const from = span.start - start;
    const took = (span.end ?? span.start) - span.start;
    const facts = Object.entries(SHOWN)
      .filter(([key]) => span.attributes[key] !== undefined && span.attributes[key] !== false)
      .map(([key, label]) => `${label} ${escape(String(span.attributes[key]))}`)
      .join(" · ");
    const place = `margin-left:${((from / total) * 100).toFixed(1)}%;width:${Math.max(0.5, (took / total) * 100).toFixed(1)}%`;
    const bar = `<span class="span-bar k-${span.kind}" style="${place}"></span>`;
    const name = `<td style="padding-left:${depth(span) * 1.1 + 0.3}rem">${escape(span.name)}</td>`;
    return `<tr>${name}<td>${span.kind}</td><td>+${from} ms</td><td>${took} ms</td><td class="lane">${bar}</td><td class="facts">${facts}</td></tr>`;
  });
  const head = "<tr><th>span</th><th>kind</th><th>start</th><th>took</th><th></th><th></th></tr>";
  return `<table class="trace" data-testid="trace"><caption>turn ${turn} trace (${trace.traceId})</caption>${head}${rows.join("")}</table>`;
}
