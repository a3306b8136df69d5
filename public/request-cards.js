// What a turn waits for from the user, drawn where its call is, by its kind (KINDS: one body each): an approval (on the
// operator desk), a question as a form built from its JSON Schema (choices as buttons, dates as date fields, text as text
// fields), a choice as a button per option (and its own words, when it takes them), a client tool as a card this page's
// own code answers, an MCP server's elicitation as a form or as a link to its URL (https only, its host shown). Each card
// sends one decision; a refused answer opens it again.

import { agentName } from "/user-words.js";

/** The page's own client tools: each draws its card's body and answers with the tool's output. */
const CLIENT_TOOLS = {
  // The demo's delivery slots: one button per slot, the one clicked is the output.
  choose_delivery_slot: (args, body, submit) => {
    body.append(paragraph(`Pick a delivery slot for order ${args.orderId}:`));
    const row = node("div", "choices");
    for (const slot of args.slots ?? []) row.append(button(slot, () => submit({ slot })));
    body.append(row);
  },
};

function node(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function paragraph(text) {
  return node("p", "", text);
}

/** A button; what sends the answer (a form's submit, Approve) is the card's primary action. */
function button(text, onClick, kind = "button") {
  const made = node("button", kind === "submit" || text === "Approve" ? "primary" : "", text);
  made.type = kind;
  if (onClick) made.addEventListener("click", onClick);
  return made;
}

/**
 * A card for `request` appended by `place`; `send(decision)` posts it and resolves to whether it was taken.
 * Returns what the page keeps of a waiting card: whether it is open, and how to close it when the call is answered.
 */
export function requestCard(request, place, send) {
  const card = place("div", `approval request ${request.kind}`);
  card.dataset.testid = `request-${request.kind}`;
  card.dataset.toolCallId = request.toolCallId;
  const body = node("div", "request-body");
  const status = node("p", "request-status");
  const decline = button("Decline", () => decide({ toolCallId: request.toolCallId, approved: false }));
  decline.className = "decline";
  let open = true;
  const controls = () => [...card.querySelectorAll("button, input, select")];
  const decide = async (decision) => {
    if (!open) return;
    open = false;
    for (const control of controls()) control.disabled = true;
    card.classList.add("decided");
    status.textContent = "approved" in decision ? "Declined." : "Sent.";
    if (await send(decision)) return;
    // Refused (an answer that does not fit, say): the card asks again.
    open = true;
    card.classList.remove("decided");
    status.textContent = "Not taken: see the error below, and try again.";
    for (const control of controls()) control.disabled = false;
  };
  const answer = (value) => decide({ toolCallId: request.toolCallId, answer: value });
  card.append(body);
  (KINDS[request.kind] ?? unknownBody)(request, body, { decide, answer });
  card.append(decline, status);
  return {
    node: card,
    open: () => open,
    close: (note) => {
      if (!open) return;
      open = false;
      for (const control of controls()) control.disabled = true;
      card.classList.add("decided");
      status.textContent = note.trim() || "Answered.";
    },
  };
}

/** Each kind's body: what it asks, and the controls that answer it (`decide` a yes or no, `answer` a value). */
const KINDS = {
  approval: (request, body, { decide }) => approvalBody(request, body, decide),
  question: (request, body, { answer }) => questionBody(request, body, answer),
  choice: (request, body, { answer }) => choiceBody(request, body, answer),
  "client-tool": (request, body, { answer }) => clientToolBody(request, body, answer),
  elicitation: (request, body, { decide, answer }) =>
    request.mode === "url"
      ? urlBody(request, body, decide)
      : formBody(`${agentName(request.server)} asks: ${request.message}`, request.schema, body, answer),
};

/** A kind this page does not know (a newer release's): what it says, to be declined. */
function unknownBody(request, body) {
  body.append(paragraph(`${agentName(request.agent)} asks: ${request.message ?? request.name}. This page cannot answer it: decline it.`));
}

/** A button per option; with `other`, the user's own words too, sent with their own button. */
function choiceBody(request, body, answer) {
  body.append(paragraph(`${agentName(request.agent)} asks: ${request.message}`));
  const row = node("div", "choices");
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", request.message);
  for (const option of request.options) row.append(button(option, () => answer(option)));
  body.append(row);
  if (request.other === undefined) return;
  const form = node("form", "request-form");
  const label = node("label", "request-field");
  const input = node("input");
  input.type = "text";
  input.name = "other";
  input.required = true;
  label.append(node("span", "", request.other), input);
  form.append(label, button("Send", null, "submit"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) answer(input.value.trim());
  });
  body.append(form);
}

function approvalBody(request, body, decide) {
  const details = node("details");
  details.append(node("summary", "", "Details"), node("code", "", JSON.stringify(request.args)));
  body.append(paragraph(request.message ?? `${agentName(request.agent)} asks for your approval to use ${request.name}.`), details);
  body.append(button("Approve", () => decide({ toolCallId: request.toolCallId, approved: true })));
}

function questionBody(request, body, answer) {
  formBody(`${agentName(request.agent)} asks: ${request.message}`, request.schema, body, answer);
}

function clientToolBody(request, body, answer) {
  const draw = CLIENT_TOOLS[request.name];
  if (draw) return draw(request.args, body, answer);
  // A client tool this page has no code for: its output schema, as a form, when it has one.
  if (request.schema) return formBody(`${agentName(request.agent)} asks this page to run ${request.name}.`, request.schema, body, answer);
  body.append(paragraph(`${agentName(request.agent)} asks this page to run ${request.name}, which it cannot do: decline it.`));
}

function urlBody(request, body, decide) {
  body.append(paragraph(`${agentName(request.server)} asks: ${request.message}`));
  const link = node("a", "request-link", `Open ${request.host}`);
  // The server gave an https URL (anything else never reaches the page); it opens apart from this one.
  link.href = request.url;
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  const host = node("p", "request-host", `This opens ${request.host}.`);
  body.append(
    link,
    host,
    button("Done", () => decide({ toolCallId: request.toolCallId, approved: true })),
  );
}

/** A form from a JSON Schema: an object's fields each by its type, or one field for a schema that is not an object. */
function formBody(message, schema, body, answer) {
  body.append(paragraph(message));
  const object = schema?.type === "object" && schema.properties;
  const fields = object ? Object.entries(schema.properties) : [["answer", schema ?? { type: "string" }]];
  // A lone choice is answered by its button; anything else by the form's Send.
  if (!object && fields[0][1].enum) {
    const row = node("div", "choices");
    for (const choice of fields[0][1].enum) row.append(button(String(choice), () => answer(choice)));
    body.append(row);
    return;
  }
  const form = node("form", "request-form");
  const readers = fields.map(([name, field]) => fieldInput(form, name, field, (schema?.required ?? []).includes(name) || !object));
  form.append(button("Send", null, "submit"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = Object.fromEntries(readers.map((read) => read()).filter(([, value]) => value !== undefined));
    answer(object ? values : values.answer);
  });
  body.append(form);
}

/** One field, labelled by its description (else its name); answers [name, value], undefined when left empty. */
function fieldInput(form, name, field, required) {
  const title = field.description ?? field.title ?? name;
  // Choices are a group of buttons (a label would name its first button after itself); any other field is a labelled input.
  const label = node(field.enum ? "div" : "label", "request-field");
  label.append(node("span", "", title));
  form.append(label);
  if (field.enum) {
    const row = node("div", "choices");
    row.setAttribute("role", "group");
    row.setAttribute("aria-label", title);
    let chosen;
    for (const choice of field.enum) {
      const option = button(String(choice), () => {
        chosen = choice;
        for (const other of row.children) {
          other.classList.toggle("chosen", other === option);
          other.setAttribute("aria-pressed", String(other === option));
        }
      });
      option.setAttribute("aria-pressed", "false");
      row.append(option);
    }
    label.append(row);
    return () => [name, chosen];
  }
  const input = node("input");
  input.name = name;
  input.required = required && field.type !== "boolean";
  if (field.type === "boolean") input.type = "checkbox";
  else if (field.type === "number" || field.type === "integer") input.type = "number";
  else if (field.format === "date") input.type = "date";
  else if (field.format === "email") input.type = "email";
  else input.type = "text";
  label.append(input);
  return () => {
    if (input.type === "checkbox") return [name, input.checked];
    if (input.value === "") return [name, undefined];
    return [name, input.type === "number" ? Number(input.value) : input.value];
  };
}
