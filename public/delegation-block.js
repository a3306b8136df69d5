// A delegated agent's work (an agent asked as a tool), drawn as it runs: a collapsible block under
// the call that delegated it, with the agent's text and its tool calls; a child of a child gets a
// block of its own inside its parent's.

const blocks = new Map(); // path joined with "/" → { details, summary, text, calls }

/** Draws one `delegated` event: `place(tag, className)` appends to the log, for a delegation with no parent block yet. */
export function drawDelegated(event, place) {
  const key = event.path.join("/");
  let block = blocks.get(key);
  if (!block) {
    const parent = blocks.get(event.path.slice(0, -1).join("/"));
    const details = parent ? parent.details.appendChild(document.createElement("details")) : place("details", "");
    details.className = "tool delegation";
    details.dataset.testid = "delegation";
    const summary = details.appendChild(document.createElement("summary"));
    const text = details.appendChild(document.createElement("p"));
    text.className = "delegation-text";
    const calls = details.appendChild(document.createElement("ul"));
    block = { details, summary, text, calls };
    blocks.set(key, block);
  }
  const inner = event.event;
  block.summary.textContent = `asked ${event.agent}: ${status(inner, block.summary.textContent)}`;
  if (inner.type === "text-delta") block.text.textContent += inner.delta;
  if (inner.type === "tool-call") {
    const line = block.calls.appendChild(document.createElement("li"));
    line.dataset.toolCallId = inner.toolCallId;
    line.textContent = `${inner.name} ${JSON.stringify(inner.args)}`;
  }
  if (inner.type === "tool-result") {
    const line = [...block.calls.children].find((li) => li.dataset.toolCallId === inner.toolCallId);
    if (line) line.textContent += inner.isError ? " → failed" : " → done";
  }
}

function status(inner, before) {
  if (inner.type === "done" && inner.status.startsWith("awaiting_")) return "waiting for you";
  if (inner.type === "done") return inner.status === "completed" ? "answered" : inner.status;
  if (inner.type === "error") return "failed";
  return before.endsWith("answered") ? "answered" : "working…";
}

/** A new conversation on the page: no block is shown any more. */
export function forgetDelegations() {
  blocks.clear();
}
