// The chat page: plain browser JavaScript, no build step. It keeps the conversation id (and
// token, when the Worker issues one) in localStorage, streams turns over fetch, and reconnects
// to GET /events with Last-Event-ID when a stream drops, skipping events it has already drawn.
// A signed-in user gets a sidebar with their conversations (their inbox) and the last one they
// had open comes back after a reload.

import { drawAccount, loadAccount } from "/account.js";
import { backgroundRequests } from "/background-requests.js";
import { inboxPanel } from "/inbox.js";
import { drawDelegated, forgetDelegations } from "/delegation-block.js";
import { liveSocket } from "/live-socket.js";
import { requestCard } from "/request-cards.js";
import { tracePanel } from "/trace-panel.js";
import { memoryPanel } from "/memory-panel.js";
import { agentName, cannotStart, forUsers, statusWords } from "/user-words.js";
import { attachmentTray, fileList, uploadAll } from "/attachments.js";

let account = { user: null };
let live = null; // the open conversation's WebSocket, when the Worker offers one
let inbox = null; // the sidebar's list, for a signed-in user
// The open conversation, per user: two people on one browser do not share it.
const storageKey = () => (account.user ? `handoff-chat:${account.user.id}` : "handoff-chat");
const log = document.querySelector("#log");
const statusLine = document.querySelector("#status");
const agentBadge = document.querySelector("#agent");
const modelBadge = document.querySelector("#model");
const form = document.querySelector("#composer");
const input = document.querySelector("#message");
const sendButton = document.querySelector("#send");
const stopButton = document.querySelector("#stop");
const dock = document.querySelector("#dock");
const welcome = document.querySelector("#welcome");

let conversation = null; // { id, token }
let people = new Set(); // names of the network's people (humanAgent), from /v1/agents
let following = false; // a follow stream is open while a person holds the conversation
// What holds Send: a turn on; a conversation being created or opened (a message would go to the
// one on show); a sign-in under way (the page reloads once it is done, losing a message sent meanwhile).
let running = false;
let switching = false;
let signingIn = false;
let cannot = false; // the Worker refused the page's first request: nothing to send to
let entryAgent = "…"; // who answers a conversation not made yet
const traceSection = document.querySelector("#trace");
const traceButton = document.querySelector("#show-trace");
const trace = tracePanel(traceSection, (path) => fetch(path, { headers: headers() }));
const refreshTrace = () => trace.refresh(conversation?.id, agentBadge.textContent).catch(() => {});
const memorySection = document.querySelector("#memory");
const memoryButton = document.querySelector("#show-memory");
const memory = memoryPanel(memorySection, (path, init = {}) => fetch(path, { ...init, headers: headers(init.headers ?? {}) }));
let lastEventId = 0;
let bubble = null; // the assistant bubble text deltas go into
const toolNodes = new Map(); // toolCallId → <details>
const approvalCards = new Map(); // toolCallId → what closes its card (an approval, a question, a client tool…) once answered

/** A signed-in user's token opens their own conversations; otherwise the conversation's token, when there is one. */
function headers(extra = {}, target = conversation) {
  const token = account.token ?? target?.token;
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

/** Appends to the log; the page follows it there unless the reader has scrolled up to read. */
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  const following = atEnd();
  log.append(node);
  welcome.hidden = true;
  if (following) reveal(node);
  return node;
}

/** Whether the reader is at the newest message (measured before something is added): then it is kept in view as it grows. */
function atEnd() {
  return document.documentElement.scrollHeight - scrollY - innerHeight < 64;
}

/**
 * Scrolls so that all of `node` lies above the dock (the status line and the composer, which stay at the bottom of the
 * window and would cover it), or its top at the window's top when it is taller than the room there.
 */
function reveal(node) {
  const place = () => {
    const room = dock.getBoundingClientRect().top - 8;
    const box = node.getBoundingClientRect();
    if (box.bottom > room) scrollBy(0, Math.min(box.bottom - room, box.top - 8));
  };
  place();
  let placedAt = scrollY;
  // Not once the reader has scrolled up meanwhile: they are reading (the page's own moves only go down).
  const unmoved = () => scrollY >= placedAt - 1;
  // Again once what the same task changed has settled (the status line, the Stop button, a page that just grew past the
  // window), and a frame later (the composer's row lays out its buttons again when Stop shows beside Attach and Send).
  requestAnimationFrame(() => {
    if (!unmoved()) return;
    place();
    placedAt = scrollY;
    requestAnimationFrame(() => unmoved() && place());
  });
}

function setAgent(name) {
  agentBadge.textContent = name;
  // A person holding the conversation is no model.
  modelBadge.hidden = people.has(name) || !modelBadge.textContent;
}

/** The model badge: what the latest leg ran on (a run-start's, or the view's after a reload). */
function setModel(model, demo) {
  modelBadge.textContent = demo ? "(offline demo model)" : `(${model})`;
}

/** Send waits while anything holds it, and while a decision the agent asked for is open: the composer says which. */
function updateSend() {
  const deciding = [...approvalCards.values()].some((card) => card.open());
  sendButton.disabled = running || switching || signingIn || cannot || deciding;
  input.disabled = deciding || cannot;
  input.placeholder = deciding ? "Decide the request above first" : "Write a message";
}

function setBusy(busy, text = "") {
  running = busy;
  updateSend();
  stopButton.hidden = !busy;
  statusLine.textContent = text;
}

function userBubble(text, files = []) {
  const node = el("div", "bubble user", text);
  if (files.length) node.append(shownFiles(files));
  reveal(node);
  bubble = null;
}

/** Files in the log: thumbnails and links, read from the conversation with the page's credential. */
function shownFiles(files) {
  const id = conversation.id;
  return fileList(files, { fileUrl: (file) => `/v1/conversations/${id}/files/${file.id}`, headers: () => headers() });
}

/** `who`: how the bubble is signed (a person's message names them too). */
function assistantBubble(agent, who = agent) {
  const node = el("div", `bubble assistant${people.has(agent) ? " person" : ""}`);
  // A mark of the agent's own (a hue from its name): who speaks shows at a glance, the same in every conversation.
  node.style.setProperty("--hue", String(hueOf(agent)));
  node.dataset.agent = agent;
  const label = document.createElement("span");
  label.className = "who";
  label.textContent = who;
  const text = document.createElement("span");
  text.className = "text";
  node.append(label, text);
  return text;
}

/** A hue (0–359) of a name's own. */
function hueOf(name) {
  return [...name].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) % 360, 7);
}

/** Who took over. Why (a transfer's reason, a router's score) is the trace's to show, not the chat's. */
function divider(from, to) {
  el("div", "divider", `${from} → ${to}`).dataset.testid = "handoff";
}

/** A tool call as a quiet line: in its tool's words where it has them (`said`), its name and arguments in the details. */
function toolCall(id, name, args, said) {
  if (name.startsWith("transfer_to_")) return;
  const details = el("details", "tool");
  details.dataset.said = said ?? name;
  const summary = document.createElement("summary");
  summary.textContent = said ?? name;
  const pre = document.createElement("pre");
  pre.textContent = `${name}\nargs: ${JSON.stringify(args, null, 2)}`;
  details.append(summary, pre);
  toolNodes.set(id, details);
  fold(details);
}

/** Tool lines in a row fold into one ("Looked up order A1001 · Refund of 129 USD…", or "8 steps"), opened to see each. */
function fold(details) {
  const previous = details.previousElementSibling;
  let group = previous?.classList.contains("tools") ? previous : null;
  if (!group && previous?.classList.contains("tool")) {
    group = document.createElement("details");
    group.className = "tools";
    group.append(document.createElement("summary"));
    previous.before(group);
    group.append(previous);
  }
  if (!group) return;
  group.append(details);
  sayFolded(group);
}

/** A fold's line: its calls as each says how it went, or (too long for a line) how many, and how the last went. */
function sayFolded(group) {
  const lines = [...group.querySelectorAll(":scope > details.tool > summary")].map((summary) => summary.textContent);
  const words = lines.join(" · ");
  group.querySelector(":scope > summary").textContent = words.length <= 90 ? words : `${lines.length} steps, the last: ${lines.at(-1)}`;
}

/** `denied`: a person declined the call, which did not run: said as such, not as a failure. */
function toolResult(id, name, result, isError, denied = false, files = []) {
  // A call answered while its card still asks (an approval that expired, one decided in another tab): the card closes.
  approvalCards.get(id)?.close(typeof result === "string" && /expired/.test(result) ? " Expired: no one decided in time." : "");
  approvalCards.delete(id);
  updateSend();
  const details = toolNodes.get(id);
  if (!details) return;
  const summary = details.querySelector("summary");
  const said = details.dataset.said;
  if (denied) {
    summary.textContent = `${said}: not done, declined`;
    details.classList.add("declined");
    if (details.parentElement.classList.contains("tools")) sayFolded(details.parentElement);
    return;
  }
  const pre = document.createElement("pre");
  pre.textContent = `${isError ? "error" : "result"}: ${typeof result === "string" ? result : JSON.stringify(result, null, 2)}`;
  details.append(pre);
  // What the call made for the user (a claim form, a label) shows outside the folded details.
  if (files.length) details.after(shownFiles(files));
  // A tool's own words say what it did; a bare name says how it went.
  summary.textContent = isError ? `${said}: failed` : said === name ? `${name}: done` : said;
  if (details.parentElement.classList.contains("tools")) sayFolded(details.parentElement);
  if (isError) details.classList.add("error");
}

function approvalCard(call) {
  const card = el("div", "approval");
  card.dataset.testid = "approval";
  const text = document.createElement("p");
  text.textContent = call.message ?? `${agentName(call.agent)} asks for your approval to use ${call.name}.`;
  // The arguments, for whoever wants them, behind a toggle: the question above is the tool's words.
  const args = document.createElement("details");
  const argsLabel = document.createElement("summary");
  argsLabel.textContent = "Details";
  const argsText = document.createElement("code");
  argsText.textContent = JSON.stringify(call.args);
  args.append(argsLabel, argsText);
  const approve = document.createElement("button");
  approve.textContent = "Approve";
  approve.className = "primary";
  const deny = document.createElement("button");
  deny.textContent = "Deny";
  const decide = (approved) => {
    approve.disabled = deny.disabled = true;
    card.classList.add("decided");
    text.textContent += approved ? " Approved." : " Denied.";
    updateSend();
    runStream(`/v1/conversations/${conversation.id}/approvals`, {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify({
        decisions: [{ toolCallId: call.toolCallId, approved }],
      }),
    });
  };
  approve.addEventListener("click", () => decide(true));
  deny.addEventListener("click", () => decide(false));
  const actions = document.createElement("div");
  actions.className = "actions";
  actions.append(approve, deny);
  card.append(text, args, actions);
  reveal(card);
  approvalCards.set(call.toolCallId, {
    open: () => !approve.disabled,
    close: (note) => {
      if (approve.disabled) return;
      approve.disabled = deny.disabled = true;
      card.classList.add("decided");
      text.textContent += note;
    },
  });
  updateSend();
}

/** An approval decided before the page loaded: its card as it was left, closed, saying what was decided. */
function decidedCard(call, { approved, reason, message }) {
  const card = el("div", "approval decided");
  card.dataset.testid = "approval";
  const text = document.createElement("p");
  text.textContent = message ?? `${agentName(call.agent)} asked for your approval to use ${call.name}.`;
  text.textContent += approved ? " Approved." : ` Denied${reason ? `: ${reason}` : ""}.`;
  card.append(text);
  reveal(card);
}

/** A question, a client tool or an elicitation: its card sends the decision to the one route every request is answered by. */
function waitingCard(request) {
  const send = (decision) =>
    runStream(`/v1/conversations/${conversation.id}/decisions`, {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify({ decisions: [decision] }),
    });
  const card = requestCard(request, el, async (decision) => {
    updateSend();
    return (await send(decision)) !== false;
  });
  approvalCards.set(request.toolCallId, card);
  reveal(card.node);
  updateSend();
}

/** What background delegations ask: decided apart from any turn (a turn may run meanwhile), so no stream follows. */
const background = backgroundRequests({
  place: el,
  decide: async (decision) => {
    const response = await fetch(`/v1/conversations/${conversation.id}/decisions`, {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify({ decisions: [decision] }),
    });
    if (response.ok) return true;
    const body = await response.json().catch(() => ({}));
    errorLine(body.error?.code ?? String(response.status), body.error?.message ?? response.statusText);
    return false;
  },
});

/** A streamed answer grows; the page follows it unless the reader has scrolled up to read. */
function grow(delta) {
  bubble ??= assistantBubble(agentBadge.textContent);
  const following = atEnd();
  bubble.textContent += delta;
  if (following) reveal(bubble.parentElement);
}

/** Draws one event; returns true when it ends the turn. */
function draw(event) {
  switch (event.type) {
    case "run-start":
      setModel(event.model, event.demo);
      setAgent(event.agent);
      return false;
    case "step-start":
      bubble = null;
      return false;
    case "text-delta":
      grow(event.delta);
      return false;
    case "tool-call":
      toolCall(event.toolCallId, event.name, event.args, event.said);
      return false;
    case "tool-result":
      toolResult(event.toolCallId, event.name, event.result, event.isError, event.denied === true, event.files);
      return false;
    case "handoff":
      divider(event.from, event.to);
      setAgent(event.to);
      bubble = null;
      // A person gave the conversation back: no one answers what waited until the user writes again.
      if (event.kind === "hand-back") setBusy(false, `${event.to} has the conversation again and answers your next message.`);
      // A person handed the conversation back: nothing more to follow.
      return event.kind === "hand-back" && following;
    case "approval-required":
      approvalCard(event);
      return false;
    case "input-required":
      waitingCard(event);
      return false;
    case "delegated":
      drawDelegated(event, el);
      return false;
    case "step-finish":
      return false;
    case "memory":
      // What the agent was told it remembers of the user: said, so it is never a secret of the page.
      if (event.action === "recalled") el("div", "recalled", `Remembered from before: ${event.memories.map((m) => m.text).join("; ")}`);
      return false;
    case "operator-message":
      assistantBubble(event.agent, event.operator ? `${event.agent} (${event.operator})` : event.agent).textContent = event.text;
      bubble = null;
      return false;
    case "done":
      setAgent(event.agent);
      refreshTrace();
      if (event.status === "cancelled") el("div", "notice", "Stopped.");
      setBusy(false, statusText(event.status, event.agent));
      // With a socket open, a person's messages come over it; else a follow stream fetches them.
      if (event.status === "awaiting_human" && !live) queueMicrotask(follow);
      refreshInbox();
      return true;
    case "error":
      errorLine(event.code, event.message);
      setBusy(false);
      refreshTrace();
      refreshInbox();
      return true;
    default:
      return false;
  }
}

/**
 * After a turn: the list now. After a first turn, again while the conversation's row still shows
 * the first message as its title: the title a model makes after the turn may take seconds to come.
 */
async function refreshInbox() {
  if (!inbox) return;
  const id = conversation.id;
  const users = [...log.querySelectorAll(".user")];
  const placeholder = users.length === 1 ? cutTitle(users[0].textContent) : null;
  for (const wait of [0, 1000, 2000, 4000, 8000, 8000]) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    if (conversation?.id !== id) return;
    const list = await inbox.refresh().catch(() => []);
    if (placeholder === null || list.find((entry) => entry.id === id)?.title !== placeholder) return;
  }
}

/** The title the Worker shows until one is made: the first message, on one line, cut to 60 characters. */
function cutTitle(text) {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}

/** An error as the person at the page reads it; the API's code is the line's title, for whoever runs the Worker. */
function errorLine(code, message) {
  const line = el("div", "error-line", forUsers(code, message));
  line.title = `${code}: ${message}`;
  line.dataset.code = code;
}

function statusText(status, agent) {
  if (status === "awaiting_approval" || status === "awaiting_input") return `${statusWords(status).replace(/^w/, "W")}.`;
  if (status === "awaiting_human") return `A person at ${agent} will answer here.`;
  return "";
}

/** What the conversation streamed since the page's last event, and the rest of a turn still running: read once. */
async function catchUp(id) {
  const response = await fetch(`/v1/conversations/${id}/events`, { headers: headers({ "last-event-id": String(lastEventId) }) }).catch(
    () => null,
  );
  if (response?.ok && response.status !== 204) await consume(response.body).catch(() => false);
}

/** While a person holds the conversation: their messages as they are sent (the stream reopens now and then). */
async function follow() {
  if (following) return;
  following = true;
  const followed = conversation.id;
  try {
    for (let attempt = 0; attempt < 1000 && conversation?.id === followed; attempt++) {
      const response = await fetch(`/v1/conversations/${followed}/events?follow=true`, {
        headers: headers({ "last-event-id": String(lastEventId) }),
      }).catch(() => null);
      if (response?.status === 204) return;
      if (response?.ok && (await consume(response.body).catch(() => false))) return;
      // Handed back to an agent: it may be answering what the customer asked meanwhile; its turn is read as it runs.
      if (!people.has(agentBadge.textContent)) return await catchUp(followed);
      await new Promise((resolve) => setTimeout(resolve, response?.ok ? 0 : 1000));
    }
  } finally {
    following = false;
  }
}

/**
 * One SSE frame's fields. Lines end only at "\n" (the server never sends "\r"); a regular
 * expression's "." would also stop at U+2028 and U+2029, which JSON leaves unescaped in text.
 */
function parseFrame(frame) {
  let id = 0;
  let data;
  for (const line of frame.split("\n")) {
    if (line.startsWith("id: ")) id = Number(line.slice(4));
    else if (line.startsWith("data: ")) data = line.slice(6);
  }
  return { id, data };
}

/** Reads an SSE body, drawing each new event; returns true if the turn ended on this stream. */
async function consume(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return false;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const { id, data } = parseFrame(frame);
      if (!data) continue;
      const event = JSON.parse(data);
      // Already drawn (before a reconnect, or from the socket): a turn's end still ends this stream.
      if (id <= lastEventId) {
        if (event.type === "done" || event.type === "error") return true;
        continue;
      }
      lastEventId = id;
      if (draw(event)) return true;
    }
  }
}

/** Runs a request that answers with a turn's stream; reconnects with Last-Event-ID if it drops. */
async function runStream(url, init) {
  setBusy(true, "…");
  let response;
  try {
    response = await fetch(url, init);
  } catch {
    return reconnect();
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    errorLine(body.error?.code ?? String(response.status), body.error?.message ?? response.statusText);
    setBusy(false);
    return false;
  }
  try {
    if (await consume(response.body)) return;
  } catch {
    // The connection dropped mid-turn: fall through to reconnect.
  }
  return reconnect();
}

// The page is going (a reload, a link): its streams end, which is no lost connection to tell anyone about.
let leaving = false;
addEventListener("pagehide", () => (leaving = true));

/** Picks the turn's stream up after its last event: at once and quietly first (a reload does that), then with backoff. */
async function reconnect() {
  for (let attempt = 1; attempt <= 8 && !leaving; attempt++) {
    setBusy(true, attempt === 1 ? "…" : `Connection lost: reconnecting (attempt ${attempt - 1})…`);
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, Math.min(4000, 250 * 2 ** attempt)));
    try {
      const response = await fetch(`/v1/conversations/${conversation.id}/events`, {
        headers: headers({ "last-event-id": String(lastEventId) }),
      });
      if (response.status === 204) {
        // Nothing more to send: the turn ended before the reconnect.
        setBusy(false);
        return;
      }
      if (response.ok && (await consume(response.body))) return;
      if (response.ok) {
        setBusy(false);
        return;
      }
    } catch {
      // Try again.
    }
  }
  setBusy(false, "Connection lost. Reload the page to continue.");
}

/** Draws the stored conversation's newest page, so a reload shows what was said last; older pages load on scrolling up. */
function drawHistory(view) {
  drawMessages(view);
  // A background delegation still at work: its block, which the socket's frames grow until its result comes as a turn.
  const asking = new Set();
  for (const run of view.background ?? []) {
    if (run.status.startsWith("awaiting_")) asking.add(run.toolCallId);
    const event = run.status.startsWith("awaiting_") ? { type: "done", status: run.status } : { type: "run-start" };
    if (run.status === "waiting" || run.status === "running" || asking.has(run.toolCallId))
      drawDelegated({ type: "delegated", path: [run.toolCallId], agent: run.agent, event }, el);
  }
  for (const request of view.pendingRequests ?? view.pendingApprovals)
    if (asking.has(request.delegated?.path[0])) background.draw(request);
    else if (request.kind === "approval") approvalCard(request);
    else waitingCard(request);
  if (view.model) setModel(view.model.name, view.model.demo);
  setAgent(view.activeAgent);
  lastEventId = view.lastEventId;
  setPrevious(view.page?.previous ?? null);
}

function drawMessages(view) {
  // Transfers and on-call returns are drawn after their call's result.
  const byCall = new Map(view.handoffs.filter((h) => "toolCallId" in h).map((h) => [h.toolCallId, h]));
  // An on-answer return has no call of its own: it closes the turn whose transfer opened it.
  const onAnswer = new Map(view.handoffs.filter((h) => h.kind === "return" && h.mode === "on-answer").map((h) => [h.openedBy, h]));
  // Hand backs by a person have no tool message: each is drawn at the note it left for the agent.
  const handBacks = view.handoffs.filter((h) => h.kind === "hand-back");
  let returned = null;
  const closeTurn = () => {
    if (returned) divider(returned.from, returned.to);
    returned = null;
  };
  // The calls of the history, by id: a decided approval is drawn as its card, closed, with the decision.
  const calls = new Map();
  for (const message of view.messages) {
    if (message.role === "user") {
      closeTurn();
      userBubble(message.content, message.files);
    } else if (message.role === "assistant") {
      if (message.content) assistantBubble(message.agent).textContent = message.content;
      for (const call of message.toolCalls ?? []) {
        let args;
        try {
          args = JSON.parse(call.arguments || "{}");
        } catch {
          args = call.arguments;
        }
        calls.set(call.id, { toolCallId: call.id, name: call.name, args, agent: message.agent });
        toolCall(call.id, call.name, args, call.said);
      }
    } else if (message.role === "system") {
      if (handBacks[0]?.to === message.agent) {
        const back = handBacks.shift();
        divider(back.from, back.to);
      }
    } else {
      let result = message.content;
      try {
        result = JSON.parse(message.content);
      } catch {
        // Plain text result.
      }
      if (message.approval && calls.has(message.toolCallId)) decidedCard(calls.get(message.toolCallId), message.approval);
      toolResult(message.toolCallId, message.name, result, message.isError, message.approval?.approved === false, message.files);
      const handoff = byCall.get(message.toolCallId);
      if (handoff) divider(handoff.from, handoff.to);
      returned = onAnswer.get(message.toolCallId) ?? returned;
    }
  }
  closeTurn();
}

// Older pages of a long conversation: loaded when the marker above the log comes into view (or is clicked).
let previousPage = null;
let loadingEarlier = false;
const earlier = document.createElement("button");
earlier.id = "earlier";
earlier.type = "button";
earlier.textContent = "Earlier messages";
earlier.hidden = true;
log.before(earlier);
earlier.addEventListener("click", () => loadEarlier());
new IntersectionObserver((entries) => {
  if (entries.some((entry) => entry.isIntersecting)) loadEarlier();
}).observe(earlier);

function setPrevious(cursor) {
  previousPage = cursor;
  earlier.hidden = cursor === null;
}

async function loadEarlier() {
  if (previousPage === null || loadingEarlier) return;
  loadingEarlier = true;
  try {
    const response = await fetch(`/v1/conversations/${conversation.id}?before=${previousPage}`, { headers: headers() });
    if (!response.ok) return;
    const view = await response.json();
    // Drawn above what is shown: the older messages first, then the current ones put back after them.
    const shown = [...log.childNodes];
    const live = bubble;
    log.replaceChildren();
    drawMessages(view);
    log.append(...shown);
    bubble = live;
    shown[0]?.scrollIntoView({ block: "start" });
    setPrevious(view.page.previous);
  } finally {
    loadingEarlier = false;
  }
}

/**
 * An empty page for a new conversation: nothing is made on the Worker until the first message is
 * sent (so opening the page, or New conversation, adds no empty conversation to anyone's list).
 */
function startFresh() {
  live?.close();
  live = null;
  clearLog();
  conversation = null;
  localStorage.removeItem(storageKey());
  linkTo(null);
  setAgent(entryAgent);
  setBusy(false);
  refreshTrace();
  inbox?.refresh().catch(() => {});
  welcome.hidden = suggestions.childElementCount === 0;
}

/** The page's address names the conversation on show (`?c=<id>`): a link that reopens it for its owner. */
function linkTo(id) {
  history.replaceState(null, "", id ? `?c=${encodeURIComponent(id)}` : location.pathname);
}

const suggestions = document.querySelector("#suggestions");

/** An empty chat offers what the network's agents are for: the first example each one gives, sent on a click. */
function offerExamples(agents) {
  const examples = agents.flatMap((agent) => (agent.examples?.slice(0, 1) ?? []).map((text) => ({ text, agent }))).slice(0, 5);
  suggestions.replaceChildren(
    ...examples.map(({ text: example, agent }) => {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = example;
      // Who answers it, under its words (drawn by the stylesheet, so the button's text stays the example's).
      button.dataset.agent = agent.human ? "a person" : agentName(agent.name);
      button.addEventListener("click", () => {
        input.value = example;
        form.requestSubmit();
      });
      return button;
    }),
  );
}

/** Makes the conversation the first message goes to; Send waits meanwhile. False when the Worker refused. */
async function createConversation() {
  switching = true;
  updateSend();
  try {
    const response = await fetch("/v1/conversations", { method: "POST", headers: headers() });
    const body = await response.json();
    if (!response.ok) {
      errorLine(body.error?.code ?? String(response.status), body.error?.message ?? response.statusText);
      return false;
    }
    conversation = { id: body.id, token: body.token };
    // What the page said before there was a conversation (a lost link, a guest's) is not part of this one.
    for (const notice of log.querySelectorAll(":scope > .notice")) notice.remove();
    localStorage.setItem(storageKey(), JSON.stringify(conversation));
    linkTo(conversation.id);
    setAgent(body.activeAgent);
    goLive();
    return true;
  } finally {
    switching = false;
    updateSend();
  }
}

function clearLog() {
  log.replaceChildren();
  toolNodes.clear();
  approvalCards.clear();
  background.clear();
  forgetDelegations();
  bubble = null;
  lastEventId = 0;
  setPrevious(null);
}

/** Shows a stored conversation (false when it is gone or not this user's) and follows it if a turn or a person is live. */
async function openConversation(saved) {
  switching = true;
  updateSend();
  try {
    return await showConversation(saved);
  } finally {
    switching = false;
    updateSend();
  }
}

async function showConversation(saved) {
  const response = await fetch(`/v1/conversations/${saved.id}`, { headers: headers({}, saved) });
  if (!response.ok) return false;
  clearLog();
  conversation = saved;
  localStorage.setItem(storageKey(), JSON.stringify(conversation));
  linkTo(conversation.id);
  closeDrawer();
  const view = await response.json();
  drawHistory(view);
  refreshTrace();
  inbox?.refresh().catch(() => {});
  if (view.status === "running") {
    reconnect();
    goLive();
    return true;
  }
  setBusy(false, statusText(view.status, view.activeAgent));
  // A person's messages come over the socket; without one, a follow stream fetches them.
  if (!(await goLive()) && people.has(view.activeAgent)) follow();
  return true;
}

/** Opens the conversation's socket (closing another's); false when the Worker offers none. */
async function goLive() {
  live?.close();
  live = null;
  const id = conversation.id;
  const socket = liveSocket({
    id,
    token: account.token ?? conversation.token,
    after: () => lastEventId,
    current: () => conversation?.id,
    onEvent: (eventId, event) => {
      if (eventId <= lastEventId || conversation?.id !== id) return;
      lastEventId = eventId;
      if (event.type === "run-start") setBusy(true, "…");
      draw(event);
    },
    // A background delegation at work: its block grows as it runs; its result comes later as a turn.
    onUnlogged: (event) => {
      if (conversation?.id !== id) return;
      drawDelegated(event, el);
      background.frame(event);
    },
  });
  if (!(await socket.opened)) return false;
  if (conversation?.id === id) live = socket;
  else socket.close();
  return true;
}

/** The sidebar of a signed-in user: their conversations, searched, switched, renamed and deleted. */
function showInbox() {
  document.querySelector("#inbox").hidden = false;
  inbox = inboxPanel({
    list: document.querySelector("#inbox-list"),
    search: document.querySelector("#inbox-search"),
    api: async (path, init = {}) => {
      const response = await fetch(path, { ...init, headers: headers(init.headers) });
      const body = response.status === 204 ? null : await response.json();
      if (!response.ok) throw new Error(body?.error?.message ?? `HTTP ${response.status}`);
      return body;
    },
    open: (id) => openConversation({ id }),
    current: () => conversation?.id,
    gone: async (id) => {
      if (conversation?.id === id) startFresh();
    },
  });
}

async function start() {
  account = await loadAccount();
  drawAccount(document.querySelector("#account"), account, {
    signingIn: () => {
      signingIn = true;
      updateSend();
      return () => {
        signingIn = false;
        updateSend();
      };
    },
  });
  const response = await fetch("/v1/agents", { headers: headers() });
  const network = await response.json().catch(() => ({}));
  if (!response.ok) {
    // The Worker refused the page (no access configured, a sign-in needed): say why, and what to configure.
    cannot = true;
    updateSend();
    el("div", "error-line", cannotStart(response.status, network.error)).dataset.testid = "cannot-start";
    return;
  }
  people = new Set(network.agents.filter((a) => a.human).map((a) => a.name));
  entryAgent = network.entry;
  offerExamples(network.agents);
  if (account.user) showInbox();
  // Only a signed-in user has a memory beyond the conversation.
  memoryButton.hidden = !account.user;
  if (account.user && localStorage.getItem("handoff-chat")) keptWhileSignedIn();
  // Nothing in the drawer (no sign-in on this Worker, no list): no button for it.
  document.body.classList.toggle("no-sidebar", !account.user && !account.signIn);
  const saved = JSON.parse(localStorage.getItem(storageKey()) ?? "null");
  const linked = new URLSearchParams(location.search).get("c");
  if (linked && (await openConversation(saved?.id === linked ? saved : { id: linked }))) return;
  if (saved && saved.id !== linked && (await openConversation(saved))) return;
  if (linked) {
    startFresh();
    // Signed in just now, the address still names the guest's conversation: say what became of it, where the user looks.
    const guest = account.user && JSON.parse(localStorage.getItem("handoff-chat") ?? "null")?.id === linked;
    el(
      "p",
      "notice",
      guest ? GUEST_KEPT : "The conversation in that link is not yours, or it no longer exists. Here is a new one.",
    ).dataset.testid = guest ? "guest-kept" : "lost-link";
    return;
  }
  // A signed-in user comes back to their newest conversation; anyone else starts afresh.
  const newest = account.user ? await inbox.refresh().then(() => document.querySelector("#inbox-list [data-conversation]")) : null;
  if (newest && (await openConversation({ id: newest.dataset.conversation }))) return;
  startFresh();
}

// Files wait in a tray above the message box: picked, pasted, or dropped anywhere on the chat.
const tray = attachmentTray({
  tray: document.querySelector("#tray"),
  picker: document.querySelector("#picker"),
  button: document.querySelector("#attach"),
  input,
  dropZone: document.querySelector("#chat-column"),
  changed: () => updateSend(),
});

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if ((!text && !tray.count) || sendButton.disabled) return;
  input.value = "";
  if (conversation === null && !(await createConversation())) {
    input.value = text;
    return;
  }
  const files = await sendFiles(tray.take());
  if (files === null) return;
  userBubble(text, files);
  runStream(`/v1/conversations/${conversation.id}/messages`, {
    method: "POST",
    headers: headers({ "content-type": "application/json" }),
    body: JSON.stringify({ message: text, ...(files.length ? { files: files.map((file) => ({ fileId: file.id })) } : {}) }),
  });
});

/** The tray's files uploaded (a progress bar under the status line for a large one): their references, or null when refused. */
async function sendFiles(files) {
  if (!files.length) return [];
  setBusy(true, files.length === 1 ? "Sending your file…" : `Sending ${files.length} files…`);
  try {
    return await uploadAll(files, { conversationId: conversation.id, headers, where: statusLine });
  } catch (error) {
    setBusy(false);
    errorLine(error.code ?? "upload_failed", error.message);
    return null;
  } finally {
    if (running) setBusy(false);
  }
}

// Stop cancels the run on the server; its stream then ends with done, status cancelled.
stopButton.addEventListener("click", async () => {
  stopButton.disabled = true;
  try {
    await fetch(`/v1/conversations/${conversation.id}/cancel`, { method: "POST", headers: headers() });
  } finally {
    stopButton.disabled = false;
  }
});

document.querySelector("#new-conversation").addEventListener("click", () => startFresh());

const GUEST_KEPT =
  "You are signed in. The conversation you had as a guest is kept on this browser (sign out to see it again); here is a new one.";

/** Signed in, the list shows the user's own conversations: the one they had before signing in stays on this browser. */
function keptWhileSignedIn() {
  const note = document.createElement("p");
  note.className = "notice";
  note.dataset.testid = "anonymous-kept";
  note.textContent = "The conversation you had before signing in is kept on this browser: sign out to see it again.";
  document.querySelector("#account").after(note);
}

// On a narrow screen the list of conversations is a drawer, opened by its button and closed by a choice or a tap beside it.
const drawerButton = document.querySelector("#show-conversations");
function closeDrawer() {
  document.body.classList.remove("drawer-open");
  drawerButton.setAttribute("aria-expanded", "false");
}
drawerButton.addEventListener("click", (event) => {
  event.stopPropagation();
  const open = document.body.classList.toggle("drawer-open");
  drawerButton.setAttribute("aria-expanded", String(open));
});
document.querySelector("#chat-column").addEventListener("click", () => closeDrawer());

// On a narrow screen the header's actions are a menu: opened by its button, closed by a choice, Escape or a tap beside it.
const actionsButton = document.querySelector("#show-actions");
function closeActions() {
  document.body.classList.remove("actions-open");
  actionsButton.setAttribute("aria-expanded", "false");
}
actionsButton.addEventListener("click", (event) => {
  event.stopPropagation();
  const open = document.body.classList.toggle("actions-open");
  actionsButton.setAttribute("aria-expanded", String(open));
  if (open) document.querySelector("#actions button:not([hidden]), #actions a")?.focus();
});
document.querySelector("#actions").addEventListener("click", () => closeActions());
document.addEventListener("click", (event) => {
  if (!event.target.closest?.("#actions")) closeActions();
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && document.body.classList.contains("actions-open")) {
    closeActions();
    actionsButton.focus();
  }
});

memoryButton.addEventListener("click", () => {
  memorySection.hidden = !memorySection.hidden;
  memoryButton.setAttribute("aria-expanded", String(!memorySection.hidden));
  if (!memorySection.hidden) memory.refresh();
});

traceButton.addEventListener("click", () => {
  traceSection.hidden = !traceSection.hidden;
  traceButton.setAttribute("aria-expanded", String(!traceSection.hidden));
  refreshTrace();
});

start().catch((error) => el("div", "error-line", `Could not start: ${error.message}`));
