/**
 * The one lookup a decision goes through (`routeDecisions`): each decision goes to the run that waits for its call, the
 * turn's first, then background runs' in order; a batch is checked whole, and a refusal names what to fix.
 */
import { describe, expect, it } from "vitest";
import { answerProblem, routeDecisions, type Wait, withoutRepeats } from "../../../src/runtime/wait/checks.ts";
import { type Decision, DecisionSchema, publicRequest, undecided, type UserRequest } from "../../../src/runtime/wait/requests.ts";

const approval = (toolCallId: string): UserRequest => ({ kind: "approval", toolCallId, name: "refund", args: {}, agent: "billing" });
const question = (toolCallId: string, operator = false): UserRequest => ({
  kind: "question",
  toolCallId,
  name: "arrange_redelivery",
  args: {},
  agent: "shipping",
  message: "Which day?",
  schema: { type: "object", properties: { day: { type: "string" } }, required: ["day"] },
  ...(operator ? { operator: true } : {}),
});

function wait(run: string, requests: UserRequest[], decisions: Decision[] = [], answered: string[] = []): Wait<string> {
  return { run, requests, decisions, answered: (id) => answered.includes(id) };
}

const runsOf = (routed: ReturnType<typeof routeDecisions<Wait<string>>>) =>
  routed.ok ? routed.value.map((share) => [share.wait.run, share.decisions.map((d) => d.toolCallId), share.complete]) : routed.error;

describe("routeDecisions", () => {
  it("sends each decision to the run that waits for its call, and says which runs have none left", () => {
    const waits = [wait("turn", [approval("r1"), approval("r2")]), wait("bg", [question("q1")])];
    const routed = routeDecisions(waits, [
      { toolCallId: "q1", answer: { day: "monday" } },
      { toolCallId: "r1", approved: true },
    ]);
    expect(runsOf(routed)).toEqual([
      ["bg", ["q1"], true],
      ["turn", ["r1"], false],
    ]);
  });

  it("counts the decisions a run stored in an earlier request: a batch that decides the last of its requests completes it", () => {
    const earlier: Decision[] = [{ toolCallId: "r1", approved: true }];
    const waits = [wait("turn", [approval("r1"), approval("r2")], earlier), wait("bg", [question("q1"), question("q2")])];
    // r1 was decided before: r2 is the turn's last; the search's q1 leaves q2 waiting.
    expect(
      runsOf(
        routeDecisions(waits, [
          { toolCallId: "r2", approved: false },
          { toolCallId: "q1", answer: { day: "monday" } },
        ]),
      ),
    ).toEqual([
      ["turn", ["r2"], true],
      ["bg", ["q1"], false],
    ]);
    // Decided earlier, q1 counts: q2 now completes the search's wait.
    const later = [
      wait("turn", [approval("r1")]),
      wait("bg", [question("q1"), question("q2")], [{ toolCallId: "q1", answer: { day: "monday" } }]),
    ];
    expect(runsOf(routeDecisions(later, [{ toolCallId: "q2", answer: { day: "friday" } }]))).toEqual([["bg", ["q2"], true]]);
  });

  it("takes several decisions for one run in one batch", () => {
    const waits = [wait("turn", [approval("r1"), approval("r2"), question("q1")])];
    expect(
      runsOf(
        routeDecisions(waits, [
          { toolCallId: "r1", approved: true },
          { toolCallId: "r2", approved: false },
        ]),
      ),
    ).toEqual([["turn", ["r1", "r2"], false]]);
  });

  it("takes the turn's call first when runs wait for calls of the same id; a second decision on it goes to the next run", () => {
    const waits = [wait("turn", [question("rd1")]), wait("bg", [question("rd1")])];
    expect(runsOf(routeDecisions(waits, [{ toolCallId: "rd1", answer: { day: "monday" } }]))).toEqual([["turn", ["rd1"], true]]);
    const both = routeDecisions(waits, [
      { toolCallId: "rd1", answer: { day: "monday" } },
      { toolCallId: "rd1", answer: { day: "tuesday" } },
    ]);
    expect(runsOf(both)).toEqual([
      ["turn", ["rd1"], true],
      ["bg", ["rd1"], true],
    ]);
    // Once the turn's is decided, the id is the background run's.
    const later = [wait("turn", [question("rd1")], [{ toolCallId: "rd1", answer: { day: "monday" } }]), wait("bg", [question("rd1")])];
    expect(runsOf(routeDecisions(later, [{ toolCallId: "rd1", answer: { day: "friday" } }]))).toEqual([["bg", ["rd1"], true]]);
  });

  it("refuses a whole batch when one decision fails, with a code and what to fix", () => {
    const waits = [wait("turn", [approval("r1")], [], ["look"]), wait("bg", [question("q1")])];
    const cases: Array<[Decision[], unknown]> = [
      [[{ toolCallId: "nope", approved: true }], { code: "request_not_found", details: { toolCallId: "nope", pending: ["r1", "q1"] } }],
      [[{ toolCallId: "look", approved: true }], { code: "request_already_decided", details: { toolCallId: "look" } }],
      [
        [
          { toolCallId: "r1", approved: true },
          { toolCallId: "q1", answer: { day: 3 } },
        ],
        { code: "invalid_answer", details: { toolCallId: "q1", kind: "question" } },
      ],
      [[{ toolCallId: "r1", answer: "yes" }], { code: "invalid_answer", message: expect.stringContaining("is an approval") }],
      [[{ toolCallId: "q1", approved: true }], { code: "invalid_answer", message: expect.stringContaining("takes an answer") }],
    ];
    for (const [decisions, error] of cases)
      expect(routeDecisions(waits, decisions)).toEqual({ ok: false, error: expect.objectContaining(error) });
    expect(routeDecisions([wait("turn", [])], [{ toolCallId: "r1", approved: true }])).toMatchObject({
      ok: false,
      error: { code: "no_pending_request" },
    });
    // A decision already stored in a run's wait is decided, whichever run it was.
    const decided = [wait("turn", []), wait("bg", [question("q1")], [{ toolCallId: "q1", answer: { day: "monday" } }])];
    expect(routeDecisions(decided, [{ toolCallId: "q1", answer: { day: "friday" } }])).toMatchObject({
      ok: false,
      error: { code: "request_already_decided" },
    });
  });

  it("lets an operator decide approvals and the questions that say so, and nothing else", () => {
    const waits = [wait("turn", [approval("r1"), question("q1"), question("q2", true)])];
    expect(routeDecisions(waits, [{ toolCallId: "r1", approved: true }], { operator: true }).ok).toBe(true);
    expect(routeDecisions(waits, [{ toolCallId: "q2", answer: { day: "monday" } }], { operator: true }).ok).toBe(true);
    expect(routeDecisions(waits, [{ toolCallId: "q1", answer: { day: "monday" } }], { operator: true })).toMatchObject({
      ok: false,
      error: { code: "answer_not_allowed", details: { toolCallId: "q1" } },
    });
  });
});

describe("what each kind of request takes", () => {
  const form: UserRequest = {
    kind: "elicitation",
    toolCallId: "f",
    name: "consent",
    args: {},
    agent: "support",
    server: "crm",
    message: "May we email you?",
    mode: "form",
    schema: { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
  };
  const url: UserRequest = { ...form, mode: "url", url: "https://crm.example/auth", host: "crm.example" } as UserRequest;
  const client: UserRequest = { kind: "client-tool", toolCallId: "n", name: "write_note", args: {}, agent: "support" };
  const pick: UserRequest = {
    kind: "choice",
    toolCallId: "p",
    name: "safe_place",
    args: {},
    agent: "support",
    message: "Where?",
    options: ["Door", "Locker"],
  };
  const pickOrSay: UserRequest = { ...pick, other: "Somewhere else" } as UserRequest;

  it("a form takes its fields as an object, a URL a yes once opened, a client tool any output; a no fits every kind", () => {
    const cases: Array<[UserRequest, Omit<Decision, "toolCallId">, string | undefined]> = [
      [form, { answer: { email: "ada@example.com" } }, undefined],
      [form, { answer: { email: 3 } }, 'does not fit its schema: email: Instance type "number" is invalid. Expected "string".'],
      [form, { answer: "ada@example.com" }, "must be an object with the form's fields."],
      [form, { answer: null }, "must be an object with the form's fields."],
      [form, { answer: ["ada@example.com"] }, "must be an object with the form's fields."],
      [form, { approved: true }, 'takes an answer: send { "toolCallId", "answer" } (or "approved": false to decline).'],
      [url, { approved: true }, undefined],
      [url, { answer: { done: true } }, 'asks the user to open a URL: send "approved": true once they have, or false to decline.'],
      [client, { answer: "anything" }, undefined],
      [pick, { answer: "Locker" }, undefined],
      [pick, { answer: "Garage" }, expect.stringMatching(/^does not fit its schema: answer: /)],
      [pick, { approved: true }, 'takes an answer: send { "toolCallId", "answer" } (or "approved": false to decline).'],
      [pickOrSay, { answer: "Garage" }, undefined],
      [pickOrSay, { answer: "  " }, "is empty: pick an option or write one."],
      [pickOrSay, { answer: 3 }, expect.stringMatching(/^does not fit its schema: answer: /)],
      [client, { approved: true }, 'takes an answer: send { "toolCallId", "answer" } (or "approved": false to decline).'],
      [approval("r"), { answer: "yes" }, 'is an approval: send "approved": true or false, not an answer.'],
      [question("q"), { answer: { day: 3 } }, expect.stringMatching(/^does not fit its schema: day: /)],
      [question("q"), { answer: "monday" }, 'does not fit its schema: answer: Instance type "string" is invalid. Expected "object".'],
    ];
    for (const [request, decision, problem] of cases)
      expect(answerProblem(request, { toolCallId: request.toolCallId, ...decision } as Decision), JSON.stringify(decision)).toEqual(
        problem,
      );
    for (const request of [form, url, client, pick, approval("r"), question("q")])
      expect(answerProblem(request, { toolCallId: request.toolCallId, approved: false })).toBeUndefined();
  });

  it("refuses in words that name the call and the fix", () => {
    const waits = [wait("turn", [approval("r1"), question("q1")], [], ["done"])];
    const said = (decisions: Decision[], operator = false) => {
      const routed = routeDecisions(waits, decisions, { operator });
      return routed.ok ? null : routed.error;
    };
    expect(said([{ toolCallId: "done", approved: true }])).toEqual({
      code: "request_already_decided",
      message: "Tool call 'done' was already decided.",
      details: { toolCallId: "done" },
    });
    // A call decided before is no reason to call another one decided.
    const decidedOne = [wait("turn", [approval("r1"), approval("r2")], [{ toolCallId: "r1", approved: true }])];
    expect(routeDecisions(decidedOne, [{ toolCallId: "x", approved: true }])).toMatchObject({
      ok: false,
      error: { code: "request_not_found", details: { pending: ["r2"] } },
    });
    expect(said([{ toolCallId: "x", approved: true }])).toEqual({
      code: "request_not_found",
      message: "No pending request 'x'.",
      details: { toolCallId: "x", pending: ["r1", "q1"] },
    });
    expect(said([{ toolCallId: "q1", answer: { day: "monday" } }], true)).toEqual({
      code: "answer_not_allowed",
      message: "Only the conversation's owner may answer 'q1': it does not let an operator answer.",
      details: { toolCallId: "q1" },
    });
    expect(routeDecisions([], [{ toolCallId: "x", approved: true }])).toEqual({
      ok: false,
      error: { code: "no_pending_request", message: "Nothing in this conversation is waiting for an approval or an answer." },
    });
    // One decision per call in a batch: a second on the same call finds no run still waiting for it.
    expect(
      said([
        { toolCallId: "r1", approved: true },
        { toolCallId: "r1", approved: false },
      ]),
    ).toMatchObject({ code: "request_not_found" });
  });
});

describe("a decision, as it arrives", () => {
  it("is a yes or no with an optional reason, or an answer; anything else is refused in words", () => {
    const parse = (value: unknown) => DecisionSchema.safeParse(value);
    expect(parse({ toolCallId: "r", approved: true }).success).toBe(true);
    expect(parse({ toolCallId: "r", approved: false, reason: "x".repeat(2000) }).success).toBe(true);
    expect(parse({ toolCallId: "q", answer: null }).success).toBe(true);
    expect(parse({ toolCallId: "x".repeat(256), answer: 0 }).success).toBe(true);
    for (const wrong of [
      { toolCallId: "", approved: true },
      { toolCallId: "x".repeat(257), approved: true },
      { toolCallId: "x".repeat(257), answer: 1 },
      { toolCallId: "", answer: 1 },
      { toolCallId: "r", approved: "yes" },
      { toolCallId: "r", approved: false, reason: "x".repeat(2001) },
      { toolCallId: "q" },
      { toolCallId: "r", approved: true, extra: 1 },
    ])
      expect(parse(wrong).success, JSON.stringify(wrong).slice(0, 60)).toBe(false);
    const refused = parse({ toolCallId: "r" });
    expect(refused.success ? "" : refused.error.issues[0]!.message).toBe(
      'Each decision is { "toolCallId", "approved": true|false, "reason"? } or { "toolCallId", "answer" }.',
    );
  });

  it("a request shown to clients leaves out what its call ran with before; with nothing to leave out it is the request itself", () => {
    const asked = { ...question("q"), earlier: ["monday"], recorded: [{ offer: 1 }] };
    expect(publicRequest(asked)).toEqual(question("q"));
    expect(publicRequest({ ...question("q"), recorded: [1] })).toEqual(question("q"));
    const plain = question("q");
    expect(publicRequest(plain)).toBe(plain);
    expect(undecided({ suspension: null, decisions: [] })).toEqual([]);
  });
});

describe("withoutRepeats", () => {
  it("leaves out decisions any run has stored with the same answer; a batch of repeats only is kept, to be refused", () => {
    const waits = [
      wait("turn", [approval("r1"), approval("r2")], [{ toolCallId: "r1", approved: true }]),
      wait("bg", [question("q1")], [{ toolCallId: "q1", answer: { day: "monday" } }]),
    ];
    const again: Decision[] = [
      { toolCallId: "r1", approved: true },
      { toolCallId: "q1", answer: { day: "monday" } },
      { toolCallId: "r2", approved: false },
    ];
    expect(withoutRepeats(waits, again)).toEqual([{ toolCallId: "r2", approved: false }]);
    // The same call with another answer is no repeat: it is refused as decided.
    expect(withoutRepeats(waits, [{ toolCallId: "r1", approved: false }])).toEqual([{ toolCallId: "r1", approved: false }]);
    expect(withoutRepeats(waits, again.slice(0, 2))).toEqual(again.slice(0, 2));
    // A repeat is the same call with the same answer: another call with the same answer is new, as is the same call changed.
    const fresh: Decision[] = [
      { toolCallId: "r2", approved: true },
      { toolCallId: "r1", approved: false },
      { toolCallId: "r1", approved: true },
    ];
    expect(withoutRepeats(waits, fresh)).toEqual(fresh.slice(0, 2));
  });
});
