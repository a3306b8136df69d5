// The operator desk: plain browser JavaScript, no build step. It lists the conversations handed to
// a person (GET /v1/operator/conversations), shows one with its handoff path, sends the person's
// answers and hands the conversation back to an agent with a note. The key stays in this tab.
// An operator who signs in (their identity provider, or the development sign-in of `npm start`)
// needs no key and no name box: the Worker takes who they are from their token.

import { drawAccount, loadAccount } from "/account.js";
import { requestCard } from "/request-cards.js";
import { fileList } from "/attachments.js";

const keyInput = document.querySelector("#operator-key");
const nameInput = document.querySelector("#operator-name");
const statusLine = document.querySelector("#desk-status");
const section = document.querySelector("#conversation");
const log = document.querySelector("#desk-log");
const path = document.querySelector("#path");
const handBackTo = document.querySelector("#hand-back-to");
const userRequests = document.querySelector("#user-requests");
let shownRequests = ""; // the requests drawn, so the refresh every 2 s does not redraw a card being filled in
let selected = null;
let people = new Set();
let account = { user: null };

keyInput.value = sessionStorage.getItem("operator-key") ?? "";
keyInput.addEventListener("change", () => sessionStorage.setItem("operator-key", keyInput.value));

function headers(extra = {}) {
  const token = account.token ?? keyInput.value;
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

async function api(url, init = {}) {
  const response = await fetch(url, { ...init, headers: headers(init.headers) });
  const body = response.status === 204 ? null : await response.json();
  if (!response.ok) throw Object.assign(new Error(body?.error?.message ?? `HTTP ${response.status}`), { status: response.status });
  return body;
}

/** Signed in without the operator role: what to do about it, since asking again will not change the answer. */
function noRole() {
  return account.signIn === "development"
    ? "You are signed in without the operator role. Sign out, then sign in again with “operator” ticked."
    : "You are signed in without the operator role. Ask whoever runs this Worker to give your account the operator role, then sign in again.";
}

/** A time of today as the desk shows it ("14:05"), with the day when it is not today. */
function clock(ms) {
  const at = new Date(ms);
  const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return at.toDateString() === new Date().toDateString() ? time : `${at.toLocaleDateString()} ${time}`;
}

/** A card of the desk: the conversation's title, who waits and for which person, since when, the deadline, and the user's latest words. */
function item(entry) {
  const li = document.createElement("li");
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.conversation = entry.conversationId;
  button.setAttribute("aria-current", String(entry.conversationId === selected));
  const title = Object.assign(document.createElement("strong"), { className: "title", textContent: entry.title ?? entry.conversationId });
  const who = entry.user ? (entry.user.name ?? entry.user.id) : "a guest";
  const held = entry.operator ? ` · with ${entry.operator.name ?? entry.operator.id}` : "";
  const meta = Object.assign(document.createElement("span"), {
    className: "meta",
    textContent: `${who} · for ${entry.person} · since ${clock(entry.since)}${held}`,
  });
  meta.dataset.testid = "desk-card-meta";
  button.append(title, meta);
  if (entry.answerBy !== undefined) {
    const late = entry.answerBy < Date.now();
    const deadline = Object.assign(document.createElement("span"), {
      className: `deadline${late ? " late" : ""}`,
      textContent: `${late ? "was due" : "answer by"} ${clock(entry.answerBy)}`,
    });
    deadline.dataset.testid = "desk-card-deadline";
    button.append(deadline);
  }
  const preview = document.createElement("span");
  preview.className = "preview";
  preview.textContent = entry.preview;
  button.append(preview);
  button.addEventListener("click", () => select(entry.conversationId));
  li.append(button);
  return li;
}

/** Redraws the desk's lists; false when the desk refused this reader (no point asking again). */
async function refreshList() {
  try {
    const { conversations } = await api("/v1/operator/conversations");
    for (const [status, none] of [
      ["waiting", "No one is waiting for a person."],
      ["held", "No conversation is held by a person."],
      ["asking", "No conversation is waiting for its user."],
    ]) {
      const cards = conversations.filter((c) => c.status === status).map(item);
      const empty = Object.assign(document.createElement("li"), { className: "empty", textContent: none });
      document.querySelector(`#${status}`).replaceChildren(...(cards.length ? cards : [empty]));
    }
    statusLine.textContent = `${conversations.length} on the desk.`;
    return true;
  } catch (error) {
    statusLine.textContent = error.status === 403 && account.user ? noRole() : error.message;
    // Refused (not signed in as an operator, or without the role): asking again every 2 s changes nothing.
    return error.status !== 403 && error.status !== 401;
  }
}

function bubble(className, who, text) {
  const node = document.createElement("div");
  node.className = `bubble ${className}`;
  if (who) {
    const label = document.createElement("span");
    label.className = "who";
    label.textContent = who;
    node.append(label);
  }
  node.append(document.createTextNode(text));
  log.append(node);
}

async function select(id) {
  selected = id;
  section.hidden = false;
  document.querySelector("#no-selection").hidden = true;
  // A phone shows the conversation in place of the queue, a button away from it.
  document.body.classList.add("reading");
  await refreshConversation();
  await refreshList();
}

async function refreshConversation() {
  if (!selected) return;
  const view = await api(`/v1/operator/conversations/${selected}`);
  // Who answered last (the view's activity names them), beside the person agent holding it.
  const answered = view.activity.findLast((a) => a.kind === "answered" && a.agent === view.activeAgent)?.by;
  const operator = answered ? ` (${answered.name ?? answered.id})` : "";
  path.textContent = `Handoff path: ${[view.handoffs[0]?.from ?? view.activeAgent, ...view.handoffs.map((h) => h.to)].join(" → ")} · held by ${view.activeAgent}${operator}`;
  log.replaceChildren();
  for (const message of view.messages) {
    if (message.role === "user") {
      bubble("user", "", message.content);
      // The customer's photos and documents, read through the operator API while a person holds the conversation.
      if (message.files?.length)
        log.lastElementChild.append(
          fileList(message.files, {
            fileUrl: (file) => `/v1/operator/conversations/${selected}/files/${file.id}`,
            headers: () => headers(),
          }),
        );
    } else if (message.role === "assistant" && message.content)
      bubble(`assistant${people.has(message.agent) ? " person" : ""}`, message.agent, message.content);
  }
  log.scrollTop = log.scrollHeight;
  drawRequests(view);
  await drawMemory(view);
}

/**
 * What the customer's agents remember of them, read-only, while a person holds the conversation: the person answers
 * knowing what the agents know. Hidden for a guest's conversation, which has none.
 */
async function drawMemory(view) {
  const box = document.querySelector("#customer-memory");
  const held = people.has(view.activeAgent);
  const memories = held
    ? await api(`/v1/operator/conversations/${selected}/memory`).then(
        (b) => b.memories,
        () => [],
      )
    : [];
  box.hidden = memories.length === 0;
  box
    .querySelector("ul")
    .replaceChildren(...memories.map((m) => Object.assign(document.createElement("li"), { textContent: `${m.text} (${m.type})` })));
}

/**
 * What the conversation's turn waits for from its user: each request said, and a card for those an operator may answer
 * (approvals, and questions that let an operator answer), sent to the operator's decisions route.
 */
function drawRequests(view) {
  const waiting = view.pendingRequests ?? [];
  const key = JSON.stringify(waiting.map((r) => r.toolCallId));
  if (key === shownRequests) return;
  shownRequests = key;
  userRequests.replaceChildren();
  // The person's answer and hand back are for a conversation a person holds; this one waits for its user.
  for (const form of ["#answer", "#hand-back"]) document.querySelector(form).hidden = waiting.length > 0;
  if (!waiting.length) return;
  const place = (tag, className) => userRequests.appendChild(Object.assign(document.createElement(tag), { className }));
  place("p", "asking-note").textContent = `Waiting for the user: ${waiting.map(said).join("; ")}.`;
  const send = async (decision) => {
    try {
      const response = await fetch(`/v1/conversations/${selected}/operator/decisions`, {
        method: "POST",
        headers: headers({ "content-type": "application/json" }),
        body: JSON.stringify({ decisions: [decision] }),
      });
      await response.body?.cancel();
      if (!response.ok) statusLine.textContent = `Not taken (HTTP ${response.status}).`;
      return response.ok;
    } catch (error) {
      statusLine.textContent = error.message;
      return false;
    }
  };
  // What an operator may answer: approvals, and the asks that say so (`operator`).
  for (const request of waiting.filter((r) => r.kind === "approval" || r.operator)) requestCard(request, place, send);
}

/** One request as the desk says it: its kind, its tool, and what it asks. */
function said(request) {
  const asks = request.message ?? (request.kind === "client-tool" ? "to run on the user's side" : "");
  return `${request.kind} from ${request.name}${asks ? ` (${asks})` : ""}`;
}

document.querySelector("#answer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = document.querySelector("#answer-text");
  await api(`/v1/conversations/${selected}/operator/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    // Signed in, the name is the one in the token: the Worker refuses one chosen here.
    body: JSON.stringify({ text: text.value, operator: account.user ? undefined : nameInput.value || undefined }),
  });
  text.value = "";
  await refreshConversation();
  await refreshList();
});

document.querySelector("#hand-back").addEventListener("submit", async (event) => {
  event.preventDefault();
  const note = document.querySelector("#hand-back-note");
  await api(`/v1/conversations/${selected}/operator/handoff`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ to: handBackTo.value, note: note.value }),
  });
  note.value = "";
  await refreshConversation();
  selected = null;
  section.hidden = true;
  document.querySelector("#no-selection").hidden = false;
  document.body.classList.remove("reading");
  await refreshList();
});

document.querySelector("#back-to-queue").addEventListener("click", () => document.body.classList.remove("reading"));

async function start() {
  account = await loadAccount();
  drawAccount(document.querySelector("#account"), account, { operatorByDefault: true });
  // Signed in, who is answering comes from the token: no key, no name to type. Where the development
  // sign-in is offered the API is open: signing in is how to answer under a name, so no second name box.
  document.querySelector("#key-access").hidden = Boolean(account.user) || account.signIn === "development";
  const { agents } = await api("/v1/agents").catch(() => ({ agents: [] }));
  people = new Set(agents.filter((a) => a.human).map((a) => a.name));
  handBackTo.replaceChildren(
    ...agents.filter((a) => !a.human).map((a) => Object.assign(document.createElement("option"), { value: a.name, textContent: a.name })),
  );
  if (!(await refreshList())) return;
  const polling = setInterval(async () => {
    if (!(await refreshList())) return clearInterval(polling);
    refreshConversation().catch(() => {});
  }, 2000);
}

start();
