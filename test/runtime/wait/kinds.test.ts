/**
 * Each kind of request as its descriptor makes it (src/runtime/wait/kinds/): the event that announces it (checked by the
 * events' own schema, built from the kinds), who besides the owner may answer it, its words for people, the model's words
 * when it is declined, and the interrupt AG-UI shows of it. A new kind gets a row in each table here.
 */
import { describe, expect, it } from "vitest";
import { RunEventSchema } from "../../../src/runtime/events.ts";
import { routeDecisions, type Wait } from "../../../src/runtime/wait/checks.ts";
import { callAsks } from "../../../src/runtime/wait/asks.ts";
import { denialMessage, kindOf, type UserRequest } from "../../../src/runtime/wait/requests.ts";
import { requestEvent } from "../../../src/runtime/step/call-request.ts";
import { AgUiEncoder, requestInterrupt } from "../../../src/wire/ag-ui-stream.ts";

const base = { toolCallId: "c", name: "tool", args: { orderId: "A1" }, agent: "shipping" };
const KINDS: Record<string, UserRequest> = {
  approval: { ...base, kind: "approval", message: "Refund 5 USD?" },
  question: { ...base, kind: "question", message: "Which day?", schema: { type: "string" }, operator: true },
  choice: { ...base, kind: "choice", message: "Where?", options: ["Door", "Locker"], other: "Elsewhere" },
  "client-tool": { ...base, kind: "client-tool", schema: { type: "object" } },
  form: {
    ...base,
    kind: "elicitation",
    server: "crm",
    message: "Your email?",
    mode: "form",
    schema: { type: "object", required: ["email"] },
  },
  url: { ...base, kind: "elicitation", server: "crm", message: "Sign in.", mode: "url", url: "https://crm.example/a", host: "crm.example" },
};

describe("each kind's event", () => {
  it("is what the events' schema takes, and a field of another kind's, or one missing, is refused", () => {
    for (const [name, request] of Object.entries(KINDS)) {
      const event = requestEvent(request);
      expect(event.type, name).toBe(name === "approval" ? "approval-required" : "input-required");
      expect(RunEventSchema.safeParse(event).success, name).toBe(true);
    }
    const wrong = [
      { ...requestEvent(KINDS.choice!), options: undefined },
      { ...requestEvent(KINDS.choice!), schema: { type: "string" } },
      { ...requestEvent(KINDS.question!), message: undefined },
      { ...requestEvent(KINDS.question!), options: ["a"] },
      { ...requestEvent(KINDS["client-tool"]!), message: "no" },
      { ...requestEvent(KINDS.url!), host: undefined },
      { ...requestEvent(KINDS.form!), server: undefined },
      { ...requestEvent(KINDS.form!), mode: "url" },
      { ...requestEvent(KINDS.approval!), message: 5 },
    ];
    for (const event of wrong) expect(RunEventSchema.safeParse(event).success, JSON.stringify(event)).toBe(false);
  });
});

describe("who answers each kind", () => {
  it("an operator answers an approval, and a question or choice that says so; never a client tool or an elicitation", () => {
    const asOperator = (request: UserRequest, decision: object) => {
      const wait: Wait<string> = { run: "turn", requests: [request], decisions: [], answered: () => false };
      return routeDecisions([wait], [{ toolCallId: "c", ...decision } as never], { operator: true }).ok;
    };
    expect(asOperator(KINDS.approval!, { approved: true })).toBe(true);
    expect(asOperator(KINDS.question!, { answer: "monday" })).toBe(true);
    expect(asOperator({ ...KINDS.question!, operator: false } as UserRequest, { answer: "monday" })).toBe(false);
    expect(asOperator(KINDS.choice!, { answer: "Door" })).toBe(false);
    expect(asOperator({ ...KINDS.choice!, operator: true } as UserRequest, { answer: "Door" })).toBe(true);
    expect(asOperator(KINDS["client-tool"]!, { answer: {} })).toBe(false);
    expect(asOperator(KINDS.form!, { answer: {} })).toBe(false);
    expect(asOperator(KINDS.url!, { approved: true })).toBe(false);
  });
});

describe("each kind in words", () => {
  it("says what it asks, for people (AG-UI's interrupt, the A2A status)", () => {
    expect(Object.fromEntries(Object.entries(KINDS).map(([name, r]) => [name, kindOf(r).said(r)]))).toEqual({
      approval: "shipping asks to run tool: approve or deny.",
      question: "Which day?",
      choice: "Where? (Door / Locker / Elsewhere)",
      "client-tool": "shipping asks to run tool: approve or deny.",
      form: "Your email?",
      url: "Sign in. (opens crm.example)",
    });
    const { other: _none, ...onlyOptions } = KINDS.choice as Extract<UserRequest, { kind: "choice" }>;
    expect(kindOf(onlyOptions).said(onlyOptions)).toBe("Where? (Door / Locker)");
  });

  it("tells the model, in its own words, that the user declined it or let it expire", () => {
    const said = (kind: UserRequest["kind"], reason?: string) =>
      denialMessage({ toolCallId: "c", approved: false, ...(reason ? { reason } : {}) }, kind);
    expect(said("approval")).toBe("A person declined this call.");
    expect(said("approval", " too much ")).toBe("A person declined this call: too much");
    expect(said("question", "busy")).toBe("The user declined to answer: busy");
    expect(said("choice")).toBe("The user declined to choose.");
    expect(said("client-tool")).toBe("The user declined to run this on their side.");
    expect(said("approval", "expired")).toBe("No one approved this call before its deadline: it expired and did not run.");
    expect(said("choice", "expired")).toBe("The user did not choose before the deadline: the request expired.");
    expect(denialMessage({ toolCallId: "c", approved: false })).toBe("A person declined this call.");
  });

  it("is an AG-UI interrupt: its reason, its words, what an answer fits (or a yes or no), and its own fields", () => {
    const interrupts = Object.fromEntries(Object.entries(KINDS).map(([name, r]) => [name, requestInterrupt(r)]));
    const yesOrNo = { type: "object", properties: { approved: { type: "boolean" }, reason: { type: "string" } }, required: ["approved"] };
    expect(interrupts.approval).toMatchObject({
      reason: "tool_approval",
      responseSchema: yesOrNo,
      metadata: { kind: "approval", args: base.args },
    });
    expect(interrupts.question).toMatchObject({
      reason: "input_required",
      responseSchema: { type: "string" },
      metadata: { operator: true },
    });
    expect(interrupts.choice).toMatchObject({
      reason: "input_required",
      responseSchema: { type: "string", minLength: 1, maxLength: 2000, examples: ["Door", "Locker"] },
      metadata: { options: ["Door", "Locker"], other: "Elsewhere" },
    });
    const { other: _none, ...onlyOptions } = KINDS.choice as Extract<UserRequest, { kind: "choice" }>;
    expect(requestInterrupt(onlyOptions).responseSchema).toEqual({ type: "string", enum: ["Door", "Locker"] });
    expect(interrupts["client-tool"]).toMatchObject({ reason: "elicitation", responseSchema: yesOrNo });
    expect(interrupts.form).toMatchObject({ reason: "elicitation", metadata: { server: "crm", mode: "form" } });
    expect(interrupts.form!.responseSchema).toEqual({ type: "object", required: ["email"] });
    expect(interrupts.question!.responseSchema).toEqual({ type: "string" });
    expect(interrupts.url).toMatchObject({
      reason: "elicitation",
      responseSchema: yesOrNo,
      metadata: { mode: "url", host: "crm.example" },
    });
    // A client tool is AG-UI's frontend tool: a run that waits on it alone ends as a success naming the call, not an interrupt.
    const encoder = () => new AgUiEncoder({ threadId: "t", runId: "r", isPerson: () => false });
    expect(encoder().interrupted([KINDS["client-tool"]!])).toContain('"outcome":{"type":"success","pendingToolCallIds":["c"]}');
    expect(encoder().interrupted([KINDS["client-tool"]!, KINDS.choice!])).toContain('"outcome":{"type":"interrupt"');
    for (const interrupt of Object.values(interrupts)) {
      expect(interrupt.metadata).not.toHaveProperty("message");
      expect(interrupt.metadata).not.toHaveProperty("schema");
    }
  });
});

describe("a choice as a tool asks it", () => {
  it("takes up to 20 options of up to 200 characters, an operator, a deadline, and its own words only when they say something", async () => {
    const asked = async (choice: object) => {
      const asks = callAsks([]);
      await asks.ask(choice as never).catch(() => {});
      return asks.pending;
    };
    const twenty = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(200, "x"));
    expect(await asked({ message: "Pick", options: twenty, operator: true, expiresIn: "5m", other: "  " })).toEqual({
      kind: "choice",
      message: "Pick",
      options: twenty,
      operator: true,
      expiresInMs: 300_000,
    });
    expect(await asked({ message: "Pick", options: ["a"], other: " Mine " })).toEqual({
      kind: "choice",
      message: "Pick",
      options: ["a"],
      other: "Mine",
    });
    for (const options of [["x".repeat(201)], [3], "ab"])
      await expect(callAsks([]).ask({ message: "Pick", options } as never)).rejects.toThrow(/ctx\.ask's options/);
    await expect(callAsks([]).ask({ message: "Pick", options: ["a"], expiresIn: "soon" } as never)).rejects.toThrow(/ctx\.ask's expiresIn/);
    expect(await callAsks([" Door "]).ask({ message: "Pick", options: ["Door"] })).toBe("Door");
  });
});
