// The trace panel: why the conversation went where it went. The network drawn as a graph (the
// agent holding the conversation highlighted, this conversation's handoffs drawn over it with their
// turn numbers) and, for a chosen turn, its spans on a time axis. Plain SVG built in the browser:
// a handful of agents on an ellipse needs no layout library, and the page stays one offline file set.

import { statusWords } from "/user-words.js";

const SVG = "http://www.w3.org/2000/svg";
const GRAPH = { width: 680, height: 250, rx: 52, ry: 17 };
const FALL = { label: 190, bars: 360, row: 22, top: 26, right: 170 };
/** Spans that are moments, drawn as a diamond; the rest are bars, however short. */
const INSTANTS = new Set(["handoff", "refused-handoff", "compaction", "guardrail"]);

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Where a tapped part of the trace says why (a hover's title is out of reach on a touch screen). */
let whyLine = null;

/** A hover title, and the same words under the trace when the part is tapped, clicked, or chosen with the keyboard. */
function tooltip(node, text) {
  node.append(svg("title", {}, text));
  node.setAttribute("tabindex", "0");
  node.classList.add("explained");
  const show = () => {
    if (whyLine) whyLine.textContent = text;
  };
  node.addEventListener("click", show);
  node.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") show();
  });
  return node;
}

/** Where each agent sits: the entry first, on the left, the rest around an ellipse. */
function layout(names) {
  const cx = GRAPH.width / 2;
  const cy = GRAPH.height / 2;
  return new Map(
    names.map((name, i) => {
      const angle = Math.PI + (2 * Math.PI * i) / names.length;
      return [name, { x: cx + (GRAPH.width / 2 - 70) * Math.cos(angle), y: cy + (GRAPH.height / 2 - 32) * Math.sin(angle) }];
    }),
  );
}

/** A curved edge from one node's border to another's; `a → b` and `b → a` bend to opposite sides. */
function edgePath(from, to, bend) {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy) || 1;
  const control = { x: (from.x + to.x) / 2 - (dy / length) * bend, y: (from.y + to.y) / 2 + (dx / length) * bend };
  const clip = (node, toward) => {
    const ux = toward.x - node.x;
    const uy = toward.y - node.y;
    const scale = 1 / Math.hypot(ux / GRAPH.rx, uy / GRAPH.ry);
    return { x: node.x + ux * scale, y: node.y + uy * scale };
  };
  const start = clip(from, control);
  const end = clip(to, control);
  const mid = { x: 0.25 * start.x + 0.5 * control.x + 0.25 * end.x, y: 0.25 * start.y + 0.5 * control.y + 0.25 * end.y };
  return { d: `M${start.x},${start.y} Q${control.x},${control.y} ${end.x},${end.y}`, mid };
}

function drawGraph(target, agents, turns, active) {
  const names = agents.agents.map((a) => a.name);
  for (const turn of turns) for (const name of turn.agents) if (!names.includes(name)) names.push(name);
  const at = layout(names);
  const root = svg("svg", { viewBox: `0 0 ${GRAPH.width} ${GRAPH.height}`, role: "img", "aria-label": "The agent network" });
  const defs = svg("defs");
  for (const id of ["arrow", "arrow-path"]) {
    const marker = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" });
    marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: id }));
    defs.append(marker);
  }
  root.append(defs);
  for (const agent of agents.agents)
    for (const to of agent.handoffs)
      if (at.has(to))
        root.append(svg("path", { d: edgePath(at.get(agent.name), at.get(to), 18).d, class: "edge", "marker-end": "url(#arrow)" }));
  // This conversation's handoffs, labelled with the turns that made them.
  const taken = new Map();
  for (const turn of turns)
    for (const h of turn.handoffs) {
      const key = `${h.from}→${h.to}`;
      taken.set(key, { ...h, turns: [...(taken.get(key)?.turns ?? []), turn.turn] });
    }
  for (const h of taken.values()) {
    if (!at.has(h.from) || !at.has(h.to)) continue;
    const { d, mid } = edgePath(at.get(h.from), at.get(h.to), 18);
    const path = svg("path", { d, class: "path-edge", "marker-end": "url(#arrow-path)", "data-testid": "path-edge" });
    path.dataset.from = h.from;
    path.dataset.to = h.to;
    root.append(tooltip(path, `${h.from} → ${h.to} in turn ${h.turns.join(", ")}${h.reason ? `: ${h.reason}` : ""}`));
    const label = svg("text", { x: mid.x, y: mid.y - 4, class: "path-label", "text-anchor": "middle" }, h.turns.join(","));
    root.append(label);
  }
  for (const name of names) {
    const { x, y } = at.get(name);
    const known = agents.agents.find((a) => a.name === name);
    const group = svg("g", {
      class: `node${name === active ? " active" : ""}${name === agents.entry ? " entry" : ""}${known?.human ? " person" : ""}`,
      "data-testid": "graph-node",
    });
    group.dataset.agent = name;
    group.append(svg("ellipse", { cx: x, cy: y, rx: GRAPH.rx, ry: GRAPH.ry }));
    group.append(svg("text", { x, y: y + 4, "text-anchor": "middle" }, name));
    root.append(tooltip(group, `${name}${known?.description ? `: ${known.description}` : " (no longer in the network)"}`));
  }
  target.replaceChildren(root);
}

/** The spans in tree order: each span, then its children by start time. */
function treeOrder(spans) {
  const children = new Map();
  for (const span of spans) children.set(span.parentId, [...(children.get(span.parentId) ?? []), span]);
  const ids = new Set(spans.map((s) => s.id));
  const roots = spans.filter((s) => !ids.has(s.parentId));
  const out = [];
  const visit = (span, depth) => {
    out.push({ span, depth });
    for (const child of (children.get(span.id) ?? []).sort((a, b) => a.start - b.start)) visit(child, depth + 1);
  };
  for (const span of roots) visit(span, 0);
  return out;
}

/**
 * The axis's ticks, in whole milliseconds (what the spans are timed in): a round step giving at
 * most six ticks, widened until no two labels (about 7 units a character, in the SVG's own units) touch.
 */
function ticks(total, scale) {
  const nice = (at) => {
    const power = 10 ** Math.floor(Math.log10(Math.max(at, 1)));
    return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= at) ?? power * 10;
  };
  let step = nice(total / 5);
  while (step * scale < tickLabel(total).length * 7 + 10) step = nice(step * 1.5);
  const count = Math.floor(total / step);
  return Array.from({ length: count + 1 }, (_, i) => i * step);
}

/** A tick's label: milliseconds below a second, else seconds with no float noise. */
function tickLabel(ms) {
  if (ms === 0) return "0";
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(2))} s`;
}

function spanLabel(span) {
  if (span.kind === "model") {
    const a = span.attributes;
    const tokens =
      a["gen_ai.usage.input_tokens"] !== undefined ? `${a["gen_ai.usage.input_tokens"]} in · ${a["gen_ai.usage.output_tokens"]} out` : "";
    return tokens;
  }
  if (span.kind === "request") {
    if (span.end === null) return "waiting";
    if (!span.attributes.approved) return "declined";
    return span.attributes["handoff.request.kind"] === "approval" ? "approved" : "answered";
  }
  if (span.kind === "refused-handoff") return "refused";
  // An agent asked as a tool: its run sits under the call that asked it.
  if (span.attributes["handoff.delegation.path"] !== undefined) return "asked as a tool";
  return "";
}

function drawWaterfall(target, trace) {
  const rows = treeOrder(trace.spans);
  const t0 = Math.min(...trace.spans.map((s) => s.start));
  const t1 = Math.max(...trace.spans.map((s) => s.end ?? s.start), t0 + 1);
  const scale = FALL.bars / (t1 - t0);
  const x = (t) => FALL.label + (t - t0) * scale;
  const width = FALL.label + FALL.bars + FALL.right;
  const height = FALL.top + rows.length * FALL.row + 6;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `Turn ${trace.turn} on a time axis` });
  for (const t of ticks(t1 - t0, scale)) {
    root.append(svg("line", { x1: x(t0 + t), x2: x(t0 + t), y1: FALL.top - 6, y2: height, class: "tick" }));
    root.append(svg("text", { x: x(t0 + t), y: FALL.top - 10, class: "tick-label", "text-anchor": "middle" }, tickLabel(t)));
  }
  rows.forEach(({ span, depth }, i) => {
    const y = FALL.top + i * FALL.row;
    const delegated = span.attributes["handoff.delegation.path"] !== undefined;
    const row = svg("g", { class: `span ${span.kind}${delegated ? " delegation" : ""}`, "data-testid": "span-bar" });
    row.dataset.kind = span.kind;
    row.append(svg("text", { x: 4 + depth * 12, y: y + 15, class: "span-name" }, span.name));
    const end = span.end ?? t1;
    if (INSTANTS.has(span.kind)) {
      const cx = x(span.start);
      row.append(svg("path", { d: `M${cx},${y + 4} l6,7 l-6,7 l-6,-7 z`, class: "instant" }));
    } else {
      row.append(
        svg("rect", { x: x(span.start), y: y + 4, width: Math.max(2, (end - span.start) * scale), height: 14, rx: 2, class: "bar" }),
      );
      const ttft = span.attributes.timeToFirstTokenMs;
      if (span.kind === "model" && typeof ttft === "number")
        row.append(svg("rect", { x: x(span.start), y: y + 4, width: Math.max(1, ttft * scale), height: 14, rx: 2, class: "ttft" }));
    }
    const duration = span.end === null ? "open" : `${span.end - span.start} ms`;
    row.append(
      svg(
        "text",
        { x: FALL.label + FALL.bars + 8, y: y + 15, class: "span-figure" },
        [duration, spanLabel(span)].filter(Boolean).join(" · "),
      ),
    );
    const details = Object.entries(span.attributes).map(([k, v]) => `${k}: ${v}`);
    root.append(tooltip(row, [`${span.kind} ${span.name}`, duration, ...details].join("\n")));
  });
  target.replaceChildren(root);
}

/**
 * The panel, drawn into `section`: `refresh(conversationId, active)` reloads the network, the turns
 * and a turn's trace (the latest, unless an older one was picked). `request(path)` fetches with the
 * page's credentials.
 */
export function tracePanel(section, request) {
  const graph = section.querySelector("#trace-graph");
  const picker = section.querySelector("#trace-turn");
  const summary = section.querySelector("#trace-summary");
  const fall = section.querySelector("#trace-waterfall");
  whyLine = section.querySelector("#trace-why");
  let conversation = null;
  let turns = [];
  let picked = null; // a turn chosen by hand; null follows the latest

  async function showTurn(n) {
    const turn = turns.find((t) => t.turn === n);
    // The page's words; the figures are for whoever hovers (or reads the bars below).
    summary.textContent = turn
      ? [
          statusWords(turn.status).replace(/^\w/, (first) => first.toUpperCase()),
          turn.agents.join(" → "),
          ...(turn.durationMs === null ? [] : [seconds(turn.durationMs)]),
        ].join(" · ")
      : "";
    summary.title = turn
      ? `${turn.usage.modelCalls} model calls, ${turn.usage.inputTokens} tokens in and ${turn.usage.outputTokens} out (${turn.status})`
      : "";
    const response = await request(`/v1/conversations/${conversation}/turns/${n}/trace`);
    if (response.ok) drawWaterfall(fall, await response.json());
    else
      fall.replaceChildren(
        Object.assign(document.createElement("p"), { className: "notice", textContent: "This turn's trace is no longer kept." }),
      );
  }

  picker.addEventListener("change", () => {
    const n = Number(picker.value);
    picked = n === turns.at(-1)?.turn ? null : n;
    showTurn(n);
  });

  return {
    async refresh(conversationId, active) {
      if (section.hidden) return;
      if (conversationId !== conversation) picked = null;
      conversation = conversationId;
      // A conversation not made yet (nothing sent) has no turns: the network is still worth seeing.
      const [agents, list] = await Promise.all([
        request("/v1/agents").then((r) => r.json()),
        conversationId ? request(`/v1/conversations/${conversationId}/turns`).then((r) => (r.ok ? r.json() : [])) : [],
      ]);
      turns = list;
      drawGraph(graph, agents, turns, active);
      picker.replaceChildren(
        ...turns.map((t) => Object.assign(document.createElement("option"), { value: String(t.turn), textContent: `Turn ${t.turn}` })),
      );
      if (turns.length === 0) {
        summary.textContent = "No turns yet.";
        fall.replaceChildren();
        return;
      }
      const n = picked ?? turns.at(-1).turn;
      picker.value = String(n);
      await showTurn(n);
    },
  };
}

/** A turn's length as people say it: "0.8 s", "12 s". */
function seconds(ms) {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
