import {
  type Message,
  type Model,
  type ModelEvent,
  type ModelRequest,
  MEMORY_AGENT,
  REQUEST_EXPIRED,
  TITLE_AGENT,
  type ToolCall,
  type ToolMessage,
} from "../runtime/index.ts";

import { demoExtraction, recalledOf, rememberAsked, withRecalledOrder, type Recalled } from "./demo-memory.ts";

type Intent = "billing" | "shipping" | "calculator" | "support_desk";

/** A sum in words or symbols: "solve", "12 times 7", "3 + 4", "x^2 = 9". */
const SUM_WORDS = /\b(solve|calculate|compute|sqrt|square root)\b|\d\s*(times|plus|minus|divided by|multiplied by|to the power of)\s*\d/;
const SUM_SYMBOLS = /\d\s*[-+*/^x×÷%]\s*\d|x\^2/;

const INTENTS: ReadonlyArray<[Intent, RegExp]> = [
  ["support_desk", /\b(a (real )?(person|human)|someone real|talk to (a|an) (agent|human|operator))\b/i],
  ["calculator", new RegExp(`${SUM_WORDS.source}|${SUM_SYMBOLS.source}`, "i")],
  ["billing", /\b(refund|charge[sd]?|invoice|bill(ing|ed)?|payment|paid|money back)\b/i],
  ["shipping", /\b(ship(ping|ped|ment)?|(re)?deliver(y|ed)?|track(ing)?|address|package|parcel|slot|where is|damaged|crushed|broken)\b/i],
];

/**
 * The offline demo model: deterministic, routes by keywords and calls the network's real tools,
 * so the whole runtime can be tried with no account. It reads only the request, like a real model.
 */
export class DemoModel implements Model {
  readonly label = "offline-demo-model (deterministic, keyword-routed; set OPENAI_API_KEY for a real model)";
  readonly #delayMs: number;

  constructor(options: { delayMs?: number } = {}) {
    this.#delayMs = options.delayMs ?? 0;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const decision = decide(request);
    if (typeof decision === "string") {
      for (const word of decision.split(/(?<= )/)) {
        if (this.#delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.#delayMs));
        request.signal.throwIfAborted();
        yield { type: "text-delta", delta: word };
      }
      yield { type: "finish", finishReason: "stop", usage: estimateUsage(request, decision) };
      return;
    }
    for (const [i, call] of decision.entries()) {
      yield { type: "tool-call", call: { id: `call_demo_${request.messages.length}_${i}`, ...call } };
    }
    yield { type: "finish", finishReason: "tool_calls", usage: estimateUsage(request, JSON.stringify(decision)) };
  }
}

/** Tokens as a real model would roughly count them (four characters each), so the demo's traces show figures. */
function estimateUsage(request: ModelRequest, output: string): { inputTokens: number; outputTokens: number } {
  const input = request.instructions.length + JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
  return { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(output.length / 4) };
}

type Decision = string | Array<Omit<ToolCall, "id">>;

/** The notes a scheduled turn starts with (src/conversation/schedule/scheduled-work.ts, src/runtime/background-delegation.ts). */
const SCHEDULED_NOTE = /^(A follow-up|No one at|'[^']+', which \S+ asked in the background)/;

function scheduledAnswer(note: string): string {
  if (note.startsWith("No one at"))
    return "I am sorry: no one at the support desk could answer in time. I am back with you: ask me about a charge, a delivery or a sum.";
  const found = /asked in the background \(call [^)]*\), has finished: (.*)$/s.exec(note);
  if (found) return `Good news from our parcel search: ${found[1]}`;
  if (note.startsWith("'")) return `Our parcel search did not finish, I am sorry: ${note.slice(note.indexOf(", ", note.indexOf(")")) + 2)}`;
  return `Following up as promised: ${note.slice(note.indexOf(": ") + 2)}`;
}

/** A title as a model might make it: what the user wants, by the same keywords the routing uses. */
function demoTitle(text: string): string {
  const intent = INTENTS.find(([, pattern]) => pattern.test(text))?.[0];
  const orderId = findOrderId(text);
  const order = orderId ? ` on order ${orderId}` : "";
  if (intent === "billing") return /\b(twice|double)\b/i.test(text) ? `Double charge${order}` : `Billing question${order}`;
  if (intent === "shipping") return orderId ? `Delivery of order ${orderId}` : "Delivery question";
  if (intent === "calculator") return "Solving a sum";
  if (intent === "support_desk") return "Asking for a person";
  return text.split(/\s+/).slice(0, 6).join(" ");
}

/**
 * What the user asks, from their last message; when that message only answers the agent's question for an order id, with
 * the message before it, whose intent it carries ("refund it" then "A1001" is a refund of A1001).
 */
function askedText(messages: ModelRequest["messages"]): string {
  const users = messages.flatMap((m, i) => (m.role === "user" ? [i] : []));
  const last = users.at(-1);
  if (last === undefined) return "";
  const text = String(messages[last]!.content);
  const before = users.at(-2);
  const asked = (m: Message) => m.role === "assistant" && /Which order is it\?/.test(String(m.content));
  const askedForOrder = messages.slice(before ?? 0, last).some(asked);
  if (before === undefined || !askedForOrder || !findOrderId(text)) return text;
  return `${messages[before]!.content} ${text}`;
}

function decide(request: ModelRequest): Decision {
  const text = askedText(request.messages);
  if (request.agent === TITLE_AGENT) return demoTitle(/^User: (.*)$/m.exec(text)?.[1] ?? text);
  if (request.agent === MEMORY_AGENT) return demoExtraction(text);
  // A turn the schedule started: its note is the last message.
  const last = request.messages.at(-1);
  if (last?.role === "system" && SCHEDULED_NOTE.test(last.content)) return scheduledAnswer(last.content);
  const results = resultsSinceLastUser(request.messages);
  const has = (name: string) => request.tools.some((t) => t.name === name);
  const remember = rememberAsked(text, results, has);
  if (remember) return remember;
  const intent = INTENTS.find(([, pattern]) => pattern.test(text))?.[0];

  if (intent && intent !== request.agent && has(`transfer_to_${intent}`) && !results.some((r) => r.name === `transfer_to_${intent}`)) {
    return [call(`transfer_to_${intent}`, { reason: reasonFor(intent, text) })];
  }
  const recalled = recalledOf(request.instructions);
  const asked = withRecalledOrder(text, recalled, request.messages);
  return withRecalled(specialist(request, asked.text, results, has), recalled, asked.recalled, request.messages);
}

/** What the agent holding the conversation answers. */
function specialist(request: ModelRequest, text: string, results: ToolMessage[], has: (name: string) => boolean): Decision {
  switch (request.agent) {
    case "billing":
      return billing(text, results);
    case "shipping":
      return damageClaim(text, request.messages, results, has) ?? shipping(text, results, has);
    case "calculator":
      return calculator(text, results);
    case "fraud-check":
      return fraudCheck(text, results);
    case "parcel-search":
      return parcelSearch(text, results);
    default:
      return 'This is the offline demo model. Ask about a charge ("I was charged twice for order A1001"), a delivery ("Where is order A1002?") or a sum ("Solve x^2 - 5x + 6 = 0") and I will hand you to the right specialist, or ask to talk to a person.';
  }
}

const GREETINGS: Record<string, string> = {
  French: "Bonjour !",
  German: "Hallo!",
  Spanish: "¡Hola!",
  Italian: "Ciao!",
  Dutch: "Hallo!",
  Portuguese: "Olá!",
};

/**
 * An answer that uses what was recalled of the customer: the order they named in an earlier conversation, said so, and
 * (in the conversation's first answer) a greeting in the language they asked for, which a real model would answer in.
 */
function withRecalled(decision: Decision, recalled: Recalled, usedOrder: boolean, messages: readonly Message[]): Decision {
  if (typeof decision !== "string") return decision;
  const order = usedOrder ? `You told me before that your order is ${recalled.order}, so I looked at that one. ` : "";
  const first = !messages.some((m) => m.role === "assistant" && m.content);
  const greeting = first && recalled.language ? GREETINGS[recalled.language] : undefined;
  return `${greeting ? `${greeting} ` : ""}${order}${decision}`;
}

function billing(text: string, results: ToolMessage[]): Decision {
  const orderId = findOrderId(text);
  if (!orderId) return "I can help with that charge. Which order is it? Please give the order id, for example A1001.";
  const lookup = results.find((r) => r.name === "lookup_order");
  if (!lookup) return [call("lookup_order", { orderId })];
  if (lookup.isError) return `I could not find order ${orderId}: ${lookup.content}`;
  const order = JSON.parse(lookup.content) as { orderId: string; amountUsd: number; charges: number; item: string };
  const check = results.find((r) => r.name === "ask_fraud_check");
  if (/\b(fraud|suspicious|recogni[sz]e)\b/i.test(text) && !check)
    return [call("ask_fraud_check", { request: `Check order ${order.orderId} for fraud.` })];
  if (check) return check.isError ? `The fraud check did not finish: ${check.content}` : `I asked our fraud check. ${check.content}`;
  const refund = results.find((r) => r.name === "refund");
  if (/\b(refund|twice|double|money back)\b/i.test(text) && !refund) {
    return [call("refund", { orderId: order.orderId, amountUsd: order.amountUsd })];
  }
  if (refund) {
    // Declined by the user (an expired request is no one's answer: it did not go through).
    if (refund.approval?.approved === false && refund.approval.reason !== REQUEST_EXPIRED)
      return `Understood: order ${order.orderId} is not refunded. Tell me if you change your mind.`;
    return refund.isError
      ? `The refund for order ${order.orderId} did not go through: ${refund.content}`
      : `Done: ${order.amountUsd} USD for order ${order.orderId} (${order.item}) is refunded to your card.`;
  }
  return `Order ${order.orderId} (${order.item}) was charged ${order.charges} time(s), ${order.amountUsd} USD each.`;
}

/** The fraud checker, asked by billing as a tool: it looks the order up and says what it found. */
function fraudCheck(text: string, results: ToolMessage[]): Decision {
  const orderId = findOrderId(text);
  const lookup = results.find((r) => r.name === "lookup_order");
  if (orderId && !lookup) return [call("lookup_order", { orderId })];
  if (!lookup || lookup.isError) return `I could not check that order${lookup ? `: ${lookup.content}` : "."}`;
  const order = JSON.parse(lookup.content) as { orderId: string; charges: number };
  return order.charges > 1
    ? `Order ${order.orderId} was charged ${order.charges} times: a double charge, not fraud.`
    : `Order ${order.orderId} was charged once: no sign of fraud.`;
}

/** The parcel search, started by shipping in the background: it looks the order up and says where the parcel is. */
function parcelSearch(text: string, results: ToolMessage[]): Decision {
  const orderId = findOrderId(text);
  const lookup = results.find((r) => r.name === "lookup_order");
  if (orderId && !lookup) return [call("lookup_order", { orderId })];
  if (!lookup || lookup.isError) return `I could not search for that parcel${lookup ? `: ${lookup.content}` : "."}`;
  const order = JSON.parse(lookup.content) as { orderId: string; item: string; shippingAddress: string };
  const town = order.shippingAddress.split(", ").at(-1);
  const found = `The parcel of order ${order.orderId} (${order.item}) is at the ${town} depot`;
  // Asked to redeliver it: the customer says when and where (a question the search waits on).
  const redelivery = results.find((r) => r.name === "arrange_redelivery");
  if (/\bredeliver/i.test(text) && !redelivery) return [call("arrange_redelivery", { orderId: order.orderId })];
  if (redelivery?.isError) return `${found}; no redelivery was booked: ${redelivery.content}`;
  if (redelivery) {
    const booked = JSON.parse(redelivery.content) as { redeliveryDay: string; leaveAt: string };
    return `${found}; it comes again on ${booked.redeliveryDay}, left at the ${booked.leaveAt}.`;
  }
  return `${found}; it goes out again tomorrow morning.`;
}

function shipping(text: string, results: ToolMessage[], has: (name: string) => boolean): Decision {
  const orderId = findOrderId(text);
  if (!orderId) return "Which order should I check? Please give the order id, for example A1002.";
  const lookup = results.find((r) => r.name === "lookup_order");
  if (!lookup) return [call("lookup_order", { orderId })];
  if (lookup.isError) return `I could not find order ${orderId}: ${lookup.content}`;
  const order = JSON.parse(lookup.content) as { orderId: string; status: string; shippingAddress: string };
  const address = /\baddress to (.+)$/i.exec(text)?.[1]?.trim();
  const change = results.find((r) => r.name === "change_address");
  if (address && !change) return [call("change_address", { orderId: order.orderId, address })];
  if (change)
    return change.isError
      ? `I could not change the address: ${change.content}`
      : `The address of order ${order.orderId} is now ${address}.`;
  // "Check again in 10 minutes": a follow-up, a turn of its own when it is due.
  const later = /\b(?:check|look) again in (\d+) (minute|hour)s?\b/i.exec(text);
  const followUp = results.find((r) => r.name === "schedule_followup");
  if (later && !followUp && has("schedule_followup")) {
    const inMinutes = Number(later[1]) * (later[2]!.toLowerCase() === "hour" ? 60 : 1);
    return [call("schedule_followup", { inMinutes, note: `Check order ${orderId} again and tell the customer where it is.` })];
  }
  if (followUp)
    return followUp.isError
      ? `I could not schedule that: ${followUp.content}`
      : `I will check order ${orderId} again in ${later?.[1]} ${later?.[2]}(s).`;
  // A lost parcel: a search that takes a while, started in the background; its result comes later as a follow-up.
  const search = results.find((r) => r.name === "search_for_parcel");
  if (/\blost\b/i.test(text) && has("search_for_parcel") && !search) {
    // "…and redeliver it": the search asks the customer when (it waits for their answer in the background).
    const then = /\bredeliver/i.test(text) ? ", then arrange its redelivery" : "";
    return [call("search_for_parcel", { request: `Search the depots for the parcel of order ${orderId}${then}.` })];
  }
  if (search)
    return search.isError
      ? `I could not start a search: ${search.content}`
      : `I have started a search for the parcel of order ${orderId}. It runs in the background: I will come back to you here when it is done.`;
  const asked = userRequests(orderId, text, results, has);
  if (asked) return asked;
  // The tracking service is an MCP server: its tools are named `tracking_<tool>`.
  const cancel = results.find((r) => r.name === "tracking_cancel_shipment");
  if (/\bcancel\b/i.test(text) && has("tracking_cancel_shipment") && !cancel) return [call("tracking_cancel_shipment", { orderId })];
  if (cancel) return cancel.isError ? `The shipment was not cancelled: ${cancel.content}` : cancel.content;
  const tracked = results.find((r) => r.name === "tracking_track_parcel");
  if (!tracked && has("tracking_track_parcel")) return [call("tracking_track_parcel", { orderId })];
  const where = `Order ${order.orderId} is ${order.status}, going to ${order.shippingAddress}.`;
  if (!tracked || tracked.isError) return tracked ? `${where} The tracking service could not say more: ${tracked.content}` : where;
  const parcel = JSON.parse(tracked.content) as { carrier: string; latestScans: string[]; expectedDelivery: string | null };
  const eta = parcel.expectedDelivery ? ` Expected ${parcel.expectedDelivery}.` : "";
  return `${where} ${parcel.carrier} says: ${parcel.latestScans.at(-1)}.${eta}`;
}

/**
 * A photo of a damaged parcel: a damage claim opened with it (the photo's id is what the user's message carries), and its
 * form given back. None when the customer sent no image, or speaks of no damage.
 */
function damageClaim(
  text: string,
  messages: readonly Message[],
  results: ToolMessage[],
  has: (name: string) => boolean,
): Decision | undefined {
  const photo = messages.flatMap((m) => (m.role === "user" ? (m.files ?? []) : [])).findLast((file) => file.mediaType.startsWith("image/"));
  if (!photo || !/\b(damaged?|crushed|broken|dent(ed)?)\b/i.test(text) || !has("open_damage_claim")) return undefined;
  const orderId = findOrderId(text);
  if (!orderId) return "I see your photo. Which order is it? Please give the order id, for example A1002.";
  const claim = results.find((r) => r.name === "open_damage_claim");
  if (!claim) return [call("open_damage_claim", { orderId, photoId: photo.id })];
  if (claim.isError) return `I could not open a claim: ${claim.content}`;
  const opened = JSON.parse(claim.content) as { claimId: string; form: string };
  const form = `Your claim form, ${opened.form}, is below.`;
  return `I have opened damage claim ${opened.claimId} for order ${orderId}, with your photo "${photo.name}". ${form}`;
}

/**
 * What the customer is asked: a redelivery's day and place (a question), where to leave a parcel (a choice), a slot (a
 * client tool), a parcel held (an MCP elicitation).
 */
function userRequests(orderId: string, text: string, results: ToolMessage[], has: (name: string) => boolean): Decision | undefined {
  const redelivery = results.find((r) => r.name === "arrange_redelivery");
  if (/\bredeliver/i.test(text) && !redelivery) return [call("arrange_redelivery", { orderId })];
  if (redelivery) {
    if (redelivery.isError) return `No redelivery was booked: ${redelivery.content}`;
    const booked = JSON.parse(redelivery.content) as { redeliveryDay: string; leaveAt: string };
    return `Order ${orderId} comes again on ${booked.redeliveryDay}; it will be left at the ${booked.leaveAt}.`;
  }
  const place = results.find((r) => r.name === "choose_safe_place");
  if (/\b(safe place|no one is home|nobody is home|leave (it|my parcel|the parcel))\b/i.test(text) && !place && has("choose_safe_place"))
    return [call("choose_safe_place", { orderId })];
  if (place)
    return place.isError
      ? `Nothing was changed: ${place.content}`
      : `When no one is home, order ${orderId} will be left: ${(JSON.parse(place.content) as { safePlace: string }).safePlace}.`;
  const slot = results.find((r) => r.name === "choose_delivery_slot");
  if (/\b(slot|reschedule)\b/i.test(text) && !slot)
    return [call("choose_delivery_slot", { orderId, slots: ["Mon 9:00-12:00", "Mon 14:00-17:00", "Tue 9:00-12:00"] })];
  if (slot)
    return slot.isError
      ? `No slot was booked: ${slot.content}`
      : `Order ${orderId} is booked for ${(JSON.parse(slot.content) as { slot: string }).slot}.`;
  const hold = results.find((r) => r.name === "tracking_hold_at_depot");
  if (/\bhold\b/i.test(text) && has("tracking_hold_at_depot") && !hold) return [call("tracking_hold_at_depot", { orderId })];
  if (hold) return hold.isError ? `The parcel was not held: ${hold.content}` : hold.content;
  return undefined;
}

/** Solves `ax^2 + bx + c = 0` step by step with the calculator tools, in parallel where steps are independent. */
function calculator(text: string, results: ToolMessage[]): Decision {
  const values = results.filter((r) => !r.name.startsWith("transfer_to_")).map((r) => (r.isError ? Number.NaN : Number(r.content)));
  const quadratic = parseQuadratic(text);
  if (quadratic) {
    const { a, b, c } = quadratic;
    const plan: Array<() => Decision> = [
      () => [call("power", { a: b, b: 2 }), call("multiply_numbers", { a: 4 * a, b: c })],
      () => [call("subtract_numbers", { a: values[0]!, b: values[1]! })],
      () => [call("square_root", { a: values[2]! })],
      () => [call("sum_numbers", { a: -b, b: values[3]! }), call("subtract_numbers", { a: -b, b: values[3]! })],
      () => [call("divide_numbers", { a: values[4]!, b: 2 * a }), call("divide_numbers", { a: values[5]!, b: 2 * a })],
    ];
    const done = [2, 3, 4, 6, 8].indexOf(values.length) + 1;
    if (values.some(Number.isNaN)) return `That equation has no real solution: ${results.find((r) => r.isError)?.content}`;
    if (values.length === 0) return plan[0]!();
    if (done > 0 && done < plan.length) return plan[done]!();
    const [x1, x2] = [values[6]!, values[7]!].sort((p, q) => p - q);
    return `The solutions are x = ${x1} and x = ${x2}.`;
  }
  const root = /(?:sqrt|square root of)\s*\(?\s*(-?\d+(?:\.\d+)?)/i.exec(text);
  const failed = results.find((r) => r.isError && !r.name.startsWith("transfer_to_"));
  if (failed) return `I could not compute that: ${failed.content}`;
  if (root) return values.length ? `The answer is ${values[0]}.` : [call("square_root", { a: Number(root[1]) })];
  const terms = expression(text);
  if (!terms) return 'Give me numbers to work with, for example "12 * 7", "sqrt 81" or "Solve x^2 - 5x + 6 = 0".';
  // Each result so far stands for the operation that made it: the next one is planned from what is left.
  for (const value of values) terms.splice(nextOperation(terms) - 1, 3, value);
  if (terms.length === 1) return `The answer is ${terms[0]}.`;
  const at = nextOperation(terms);
  return [call(OPERATION_TOOLS[terms[at] as string]!, { a: terms[at - 1], b: terms[at + 1] })];
}

/** The calculator's tool for each operation. */
const OPERATION_TOOLS: Record<string, string> = {
  "+": "sum_numbers",
  "-": "subtract_numbers",
  "*": "multiply_numbers",
  "/": "divide_numbers",
  "^": "power",
};

/** The words people write for operations, as the calculator's symbols ("12 times 7" is "12 * 7"). */
const OPERATION_WORDS: Array<[RegExp, string]> = [
  [/\b(?:multiplied by|times)\b|(?<=\d\s*)[x×](?=\s*\d)/gi, "*"],
  [/\b(?:divided by|over)\b|÷/gi, "/"],
  [/\bplus\b/gi, "+"],
  [/\bminus\b/gi, "-"],
  [/\bto the power of\b/gi, "^"],
];

/**
 * The arithmetic in a message, as alternating numbers and operators ("15% of 200" is "15 * 200 / 100"); null when there
 * is none (a number alone is no sum to do).
 */
function expression(text: string): Array<number | string> | null {
  let written = text.replace(/(\d+(?:\.\d+)?)\s*%\s*of\s*(-?\d+(?:\.\d+)?)/gi, "$1 * $2 / 100");
  for (const [words, symbol] of OPERATION_WORDS) written = written.replace(words, ` ${symbol} `);
  const found = /-?\d+(?:\.\d+)?(?:\s*[-+*/^]\s*-?\d+(?:\.\d+)?)+/.exec(written)?.[0];
  if (!found) return null;
  const terms: Array<number | string> = [];
  for (const [, number, operator] of found.matchAll(/(-?\d+(?:\.\d+)?)|([-+*/^])/g)) {
    // "3 -2": a minus where an operator goes is the operator, and what follows it the number.
    if (number !== undefined && terms.length % 2 === 1) terms.push("-", Number(number.slice(1)));
    else terms.push(number !== undefined ? Number(number) : operator!);
  }
  return terms;
}

/** Where the next operation is: powers first, then products and quotients, then sums, each from the left. */
function nextOperation(terms: ReadonlyArray<number | string>): number {
  for (const level of [["^"], ["*", "/"], ["+", "-"]]) {
    const at = terms.findIndex((term, i) => i % 2 === 1 && level.includes(term as string));
    if (at > 0) return at;
  }
  return -1;
}

/** `ax^2 + bx + c = d`, its `bx` and `c` optional ("x^2 = 9"), as `ax^2 + bx + (c - d) = 0`. */
function parseQuadratic(text: string): { a: number; b: number; c: number } | null {
  const match = /(-?\d*)\s*x\^2\s*(?:([+-]\s*\d*)\s*x(?!\^))?\s*(?:([+-]\s*\d+(?:\.\d+)?))?\s*=\s*(-?\d+(?:\.\d+)?)/i.exec(text);
  if (!match) return null;
  const coefficient = (raw: string) => {
    const compact = raw.replace(/\s+/g, "");
    return compact === "" || compact === "+" ? 1 : compact === "-" ? -1 : Number(compact);
  };
  const constant = (raw: string | undefined) => (raw === undefined ? 0 : Number(raw.replace(/\s+/g, "")));
  return {
    a: coefficient(match[1]!),
    b: match[2] === undefined ? 0 : coefficient(match[2]),
    c: constant(match[3]) - Number(match[4]),
  };
}

function resultsSinceLastUser(messages: readonly Message[]): ToolMessage[] {
  const start = messages.findLastIndex((m) => m.role === "user");
  return messages.slice(start + 1).filter((m): m is ToolMessage => m.role === "tool");
}

function findOrderId(text: string): string | undefined {
  return /\b([A-Z]\d{4})\b/i.exec(text)?.[1]?.toUpperCase();
}

function reasonFor(intent: Intent, text: string): string {
  const topics: Record<Intent, string> = {
    billing: "billing question",
    shipping: "delivery question",
    calculator: "calculation",
    support_desk: "asked for a person",
  };
  if (/\b(twice|double)\b/i.test(text)) return "double charge";
  return topics[intent];
}

function call(name: string, args: Record<string, unknown>): Omit<ToolCall, "id"> {
  return { name, arguments: JSON.stringify(args) };
}
