/**
 * Every kind of request and every way it is answered, through the loop: an MCP server's elicitation (a form, an https
 * URL) accepted, declined, cancelled and expired, as the tool's `ctx.elicit` gets it; a question an operator may answer,
 * one asked wrong, one past its deadline; a client tool's output as text; the record an approval's decision leaves on its
 * tool message; a call that remembered before it asked; what a step suspended by a leg that died settles to. What is
 * checked is what a client sees (the events), what the model is sent next, and what the store keeps.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, type Decision, type Duration, Network, tool } from "../../../src/runtime/index.ts";
import { INTERRUPTED_CALL, settleInterrupted, type Suspension } from "../../../src/runtime/wait/suspension.ts";
import type { UserRequest } from "../../../src/runtime/wait/requests.ts";
import { MemoryFiles } from "../../../src/testing/index.ts";
import { ofType, playTurn, type TurnResult } from "../../support/run.ts";

const resume = (first: TurnResult, decisions: Decision[]) => ({ kind: "resume", suspension: first.store.suspension!, decisions }) as const;

/** What each run of the `offer` tool remembered it computed: code it remembers runs once per call. */
let offers = 0;

function network(options: { approvalExpiresIn?: Duration } = {}): Network {
  const consent = tool({
    name: "consent",
    description: "Asks the CRM's consent form, or sends the user to sign in.",
    parameters: z.object({ mode: z.enum(["form", "url", "plain-http", "not-a-url"]) }),
    execute: async ({ mode }, ctx) => {
      if (mode === "form")
        return ctx.elicit({
          server: "crm",
          message: "May we email you?",
          mode: "form",
          schema: { type: "object", properties: { email: { type: "string" } } },
        });
      const url = { url: "https://crm.example/auth?step=1", "plain-http": "http://crm.example/auth", "not-a-url": "crm auth" }[mode];
      return ctx.elicit({ server: "crm", message: "Sign in to the CRM.", mode: "url", url, elicitationId: "e1" });
    },
  });
  const callback = tool({
    name: "callback",
    description: "Asks when to call back; the desk may answer.",
    parameters: z.object({ empty: z.boolean().default(false) }),
    execute: async ({ empty }, ctx) => {
      const offer = await ctx.remember(async () => ({ offer: ++offers }));
      const at = await ctx.ask({ message: empty ? "  " : "When?", schema: z.string(), operator: true, expiresIn: "5m" });
      return { ...offer, at };
    },
  });
  const note = tool({
    name: "write_note",
    description: "The user's client writes a note.",
    parameters: z.object({ about: z.string() }),
  });
  const refund = tool({
    name: "refund",
    description: "Refunds.",
    parameters: z.object({ amount: z.number().optional() }),
    needsApproval: true,
    execute: () => "refunded",
  });
  // Approved first, then it asks: what it remembered before the ask is its own, and the ask waits for its answer.
  const book = tool({
    name: "book_visit",
    description: "Books a technician's visit, once approved, asking the customer which day.",
    parameters: z.object({}),
    needsApproval: true,
    execute: async (_args, ctx) => {
      const slot = await ctx.remember(async () => `slot-${++offers}`);
      const day = await ctx.ask({ message: "Which day?", schema: z.enum(["monday", "tuesday"]) });
      const form = await ctx.files.save({ bytes: new TextEncoder().encode(`${slot} ${day}`), mediaType: "text/plain", name: "visit.txt" });
      return { slot, day, form: form.name };
    },
  });
  const place = tool({
    name: "safe_place",
    description: "Asks where to leave a parcel.",
    parameters: z.object({ options: z.array(z.string()).optional(), other: z.boolean().default(true) }),
    execute: async ({ options, other }, ctx) => {
      const picked = await ctx.ask({
        message: "Where should it be left?",
        options: options ?? ["Front door", "Parcel locker"],
        ...(other ? { other: "Somewhere else" } : {}),
        expiresIn: "2m",
      });
      return { picked };
    },
  });
  const agent = new Agent({ name: "support", description: "d", instructions: "i", tools: [consent, callback, note, refund, book, place] });
  return new Network(agent, { defaultModel: "m", ...options });
}

/** One call, suspended, then resumed with `decision`: the tool's result event and what the model read next. */
async function answered(call: { name: string; args: unknown }, decision: Omit<Decision, "toolCallId">) {
  const first = await playTurn(network(), "go", [{ toolCalls: [{ id: "c", ...call }] }]);
  const second = await playTurn(network(), resume(first, [{ toolCallId: "c", ...decision } as Decision]), [{ text: "OK." }], {
    store: first.store,
  });
  return {
    first,
    result: ofType(second.events, "tool-result")[0]!,
    read: second.model.requests[0]!.messages.at(-1),
    history: first.store.history,
  };
}

describe("an MCP server's elicitation", () => {
  it("asks a form: the tool gets its content when accepted, a decline, or a cancel (the user cancelled, or it expired)", async () => {
    const form = { name: "consent", args: { mode: "form" } };
    const first = await playTurn(network(), "go", [{ toolCalls: [{ id: "c", ...form }] }]);
    expect(ofType(first.events, "input-required")).toEqual([
      {
        type: "input-required",
        kind: "elicitation",
        toolCallId: "c",
        name: "consent",
        args: { mode: "form" },
        agent: "support",
        server: "crm",
        message: "May we email you?",
        mode: "form",
        schema: { type: "object", properties: { email: { type: "string" } } },
      },
    ]);
    expect((await answered(form, { answer: { email: "ada@example.com" } })).result).toMatchObject({
      isError: false,
      result: { action: "accept", content: { email: "ada@example.com" } },
    });
    expect((await answered(form, { approved: false, reason: "not now" })).result).toMatchObject({ result: { action: "decline" } });
    expect((await answered(form, { approved: false, reason: "cancelled" })).result).toMatchObject({ result: { action: "cancel" } });
    expect((await answered(form, { approved: false, reason: "expired" })).result).toMatchObject({ result: { action: "cancel" } });
  });

  it("sends the user to an https URL, shown with its host; an approval says they went; any other URL is the tool's error", async () => {
    const url = { name: "consent", args: { mode: "url" } };
    const first = await playTurn(network(), "go", [{ toolCalls: [{ id: "c", ...url }] }]);
    expect(ofType(first.events, "input-required")[0]).toMatchObject({
      kind: "elicitation",
      mode: "url",
      url: "https://crm.example/auth?step=1",
      host: "crm.example",
      elicitationId: "e1",
    });
    expect((await answered(url, { approved: true })).result).toMatchObject({ isError: false, result: { action: "accept" } });
    for (const [mode, said] of [
      ["plain-http", "The elicitation's URL must be https, not http: it was not shown."],
      ["not-a-url", `The elicitation's URL "crm auth" is not a URL.`],
    ] as const) {
      const refused = await playTurn(network(), "go", [{ toolCalls: [{ id: "c", name: "consent", args: { mode } }] }, { text: "Sorry." }]);
      expect(ofType(refused.events, "input-required")).toEqual([]);
      expect(ofType(refused.events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringContaining(said) });
    }
  });
});

describe("a tool's question", () => {
  it("says an operator may answer, has the ask's own deadline, and keeps what the call remembered out of what clients see", async () => {
    offers = 0;
    const first = await playTurn(network({ approvalExpiresIn: "1h" }), "call me", [
      { toolCalls: [{ id: "c", name: "callback", args: {} }] },
    ]);
    const asked = ofType(first.events, "input-required")[0]!;
    expect(asked).toMatchObject({ kind: "question", message: "When?", operator: true });
    // The ask's 5 minutes, over the network's hour.
    expect(Date.parse(asked.expiresAt!) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    expect(Date.parse(asked.expiresAt!) - Date.now()).toBeGreaterThan(4 * 60_000);
    expect("recorded" in asked).toBe(false);
    expect(first.store.suspension!.pending[0]).toMatchObject({ recorded: [{ offer: 1 }] });
    const second = await playTurn(network(), resume(first, [{ toolCallId: "c", answer: "at noon" }]), [{ text: "Noted." }], {
      store: first.store,
    });
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({ result: { offer: 1, at: "at noon" } });
    expect(offers).toBe(1);
  });

  it("asked without words is the tool's error; past its deadline, the model reads that the user did not answer in time", async () => {
    const blank = await playTurn(network(), "call me", [
      { toolCalls: [{ id: "c", name: "callback", args: { empty: true } }] },
      { text: "Sorry." },
    ]);
    expect(ofType(blank.events, "tool-result")[0]).toMatchObject({
      isError: true,
      result: expect.stringContaining("ctx.ask needs a message."),
    });
    const { result, read } = await answered({ name: "callback", args: {} }, { approved: false, reason: "expired" });
    expect(result).toMatchObject({
      isError: true,
      denied: true,
      result: "The user did not answer before the deadline: the request expired.",
    });
    expect(read).toMatchObject({ role: "tool", content: "The user did not answer before the deadline: the request expired." });
  });
});

describe("a choice", () => {
  it("shows its options (and the offer of the user's own words); the call gets the option picked, or their words", async () => {
    const first = await playTurn(network(), "where", [{ toolCalls: [{ id: "c", name: "safe_place", args: {} }] }]);
    const [asked] = ofType(first.events, "input-required");
    expect(asked).toMatchObject({
      kind: "choice",
      toolCallId: "c",
      message: "Where should it be left?",
      options: ["Front door", "Parcel locker"],
      other: "Somewhere else",
    });
    expect(Date.parse(asked!.expiresAt!) - Date.now()).toBeLessThanOrEqual(2 * 60_000);
    expect(ofType(first.events, "done")[0]).toMatchObject({ status: "awaiting_input" });
    const call = { name: "safe_place", args: {} };
    expect((await answered(call, { answer: "Parcel locker" })).result).toMatchObject({
      isError: false,
      result: { picked: "Parcel locker" },
    });
    expect((await answered(call, { answer: "  behind the bins " })).result).toMatchObject({ result: { picked: "behind the bins" } });
    const declined = await answered(call, { approved: false, reason: "I will be in" });
    expect(declined.read).toMatchObject({ role: "tool", content: "The user declined to choose: I will be in" });
    const late = await answered(call, { approved: false, reason: "expired" });
    expect(late.read).toMatchObject({ content: "The user did not choose before the deadline: the request expired." });
  });

  it("asked with options that are no choice is the tool's error, and asks nothing", async () => {
    for (const options of [[], ["a", "a"], ["ok", " "], Array.from({ length: 21 }, (_, i) => `option ${i}`)]) {
      const wrong = await playTurn(network(), "where", [
        { toolCalls: [{ id: "c", name: "safe_place", args: { options } }] },
        { text: "Sorry." },
      ]);
      expect(ofType(wrong.events, "input-required"), JSON.stringify(options)).toEqual([]);
      expect(ofType(wrong.events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringMatching(/ctx\.ask's options/) });
    }
  });
});

describe("a client tool", () => {
  it("takes text as it is, and JSON as JSON; called with arguments that do not fit, it is the tool's error and asks nothing", async () => {
    const call = { name: "write_note", args: { about: "the refund" } };
    expect((await answered(call, { answer: "Refund requested." })).read).toMatchObject({ role: "tool", content: "Refund requested." });
    expect((await answered(call, { answer: ["a", 1] })).read).toMatchObject({ role: "tool", content: '["a",1]' });
    const wrong = await playTurn(network(), "go", [{ toolCalls: [{ id: "c", name: "write_note", args: { about: 42 } }] }, { text: "Hm." }]);
    expect(ofType(wrong.events, "input-required")).toEqual([]);
    expect(ofType(wrong.events, "tool-result")[0]).toMatchObject({ isError: true });
  });
});

describe("an approval", () => {
  it("leaves its decision on the tool message: approved, or declined with the reason trimmed; past its deadline, words of its own", async () => {
    const refund = { name: "refund", args: {} };
    const yes = await answered(refund, { approved: true });
    expect(yes.history.find((m) => m.role === "tool")).toMatchObject({ content: "refunded", approval: { approved: true } });
    const no = await answered(refund, { approved: false, reason: "  too much  " });
    expect(no.history.find((m) => m.role === "tool")).toMatchObject({
      content: "A person declined this call: too much",
      approval: { approved: false, reason: "too much" },
    });
    const blank = await answered(refund, { approved: false, reason: "   " });
    const record = blank.history.find((m) => m.role === "tool") as { content: string; approval: object };
    expect([record.content, record.approval]).toEqual(["A person declined this call.", { approved: false }]);
    const late = await answered(refund, { approved: false, reason: "expired" });
    expect(late.read).toMatchObject({ content: "No one approved this call before its deadline: it expired and did not run." });
    // A question's answer leaves no approval record: its result says it.
    const question = await answered({ name: "callback", args: {} }, { answer: "at noon" });
    expect(question.history.find((m) => m.role === "tool")).not.toHaveProperty("approval");
  });
});

describe("an approved call that asks", () => {
  it("waits for its ask after the approval, keeps the step out of the history meanwhile, and its result carries its file", async () => {
    offers = 0;
    const files = new MemoryFiles();
    const first = await playTurn(network(), "book a visit", [{ toolCalls: [{ id: "b", name: "book_visit", args: {} }] }], { files });
    expect(ofType(first.events, "approval-required")).toHaveLength(1);
    const approved = await playTurn(network(), resume(first, [{ toolCallId: "b", approved: true }]), [], { store: first.store, files });
    expect(ofType(approved.events, "tool-result")).toEqual([]);
    expect(ofType(approved.events, "input-required")).toMatchObject([{ kind: "question", toolCallId: "b", message: "Which day?" }]);
    expect(first.store.suspension!.pending).toMatchObject([{ kind: "question", recorded: ["slot-1"] }]);
    // While the step waits, the history has the user's message only: no call without its result.
    expect(first.store.history.map((m) => m.role)).toEqual(["user"]);
    const answered = await playTurn(network(), resume(first, [{ toolCallId: "b", answer: "tuesday" }]), [{ text: "Booked." }], {
      store: first.store,
      files,
    });
    const [result] = ofType(answered.events, "tool-result");
    expect(result).toMatchObject({ result: { slot: "slot-1", day: "tuesday", form: "visit.txt" }, files: [{ name: "visit.txt" }] });
    expect(files.text(result!.files![0]!.id)).toBe("slot-1 tuesday");
    expect(offers).toBe(1);
  });

  it("is not asked for when its arguments do not fit: the call fails as the tool's error and no one is asked", async () => {
    const wrong = await playTurn(network(), "refund", [
      { toolCalls: [{ id: "r", name: "refund", args: { amount: "all" } }] },
      { text: "Sorry." },
    ]);
    expect(ofType(wrong.events, "approval-required")).toEqual([]);
    expect(ofType(wrong.events, "tool-result")[0]).toMatchObject({ toolCallId: "r", isError: true });
    expect(ofType(wrong.events, "done")[0]).toMatchObject({ status: "completed" });
  });
});

describe("a step whose resumed leg died", () => {
  const suspension = (): Suspension => ({
    assistant: {
      role: "assistant",
      agent: "support",
      content: null,
      toolCalls: [
        { id: "done", name: "lookup", arguments: "{}" },
        { id: "r", name: "refund", arguments: "{}" },
        { id: "q", name: "callback", arguments: "{}" },
        { id: "n", name: "write_note", arguments: "{}" },
        { id: "e", name: "consent", arguments: "{}" },
      ],
    },
    results: [{ role: "tool", toolCallId: "done", name: "lookup", content: "found", isError: false }, null, null, null, null],
    pending: [
      { kind: "approval", toolCallId: "r", name: "refund", args: {}, agent: "support" },
      { kind: "question", toolCallId: "q", name: "callback", args: {}, agent: "support", message: "When?", schema: {} },
      { kind: "client-tool", toolCallId: "n", name: "write_note", args: {}, agent: "support" },
      {
        kind: "elicitation",
        toolCallId: "e",
        name: "consent",
        args: {},
        agent: "support",
        server: "crm",
        message: "m",
        mode: "form",
        schema: {},
      },
    ] satisfies UserRequest[],
    progress: {
      handoffs: [],
      agentSteps: 1,
      errorSteps: 0,
      stepIndex: 1,
      usage: { modelCalls: 1, inputTokens: 1, outputTokens: 1, toolCalls: 1 },
    },
    trailing: [{ role: "system", agent: "support", content: "Answer briefly." }],
  });

  it("answers what needs no run, answers a call that ran as interrupted, and keeps waiting for what is undecided", () => {
    const decisions: Decision[] = [
      { toolCallId: "r", approved: true },
      { toolCallId: "n", answer: "a note" },
    ];
    const settled = settleInterrupted(suspension(), decisions);
    expect(settled.answered.map((m) => [m.toolCallId, m.content, m.isError, m.approval])).toEqual([
      ["r", INTERRUPTED_CALL, true, { approved: true }],
      ["n", "a note", false, undefined],
    ]);
    expect(settled.complete).toBeNull();
    expect(settled.suspension!.pending.map((p) => p.toolCallId)).toEqual(["q", "e"]);
    expect(settled.suspension!.results.map((r) => r?.toolCallId ?? null)).toEqual(["done", "r", null, "n", null]);
  });

  it("once every call has its answer, the step is complete: its messages, in call order, then what trails it", () => {
    const decisions: Decision[] = [
      { toolCallId: "r", approved: false, reason: "no" },
      { toolCallId: "q", approved: false },
      { toolCallId: "n", approved: false },
      { toolCallId: "e", answer: { ok: true } },
    ];
    const settled = settleInterrupted(suspension(), decisions);
    expect(settled.suspension).toBeNull();
    expect(settled.complete!.map((m) => (m.role === "tool" ? [m.toolCallId, m.content] : m.role))).toEqual([
      "assistant",
      ["done", "found"],
      ["r", "A person declined this call: no"],
      ["q", "The user declined to answer."],
      ["n", "The user declined to run this on their side."],
      // An elicitation's call runs again with its answer: cut off, it is answered as interrupted.
      ["e", INTERRUPTED_CALL],
      "system",
    ]);
  });
});
