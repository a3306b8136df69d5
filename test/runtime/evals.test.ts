/**
 * The eval runner on a scripted model, where every score is known by hand: routing accuracy,
 * precision and recall per expected agent, the confusion matrix, pass^k, handoffs, refused
 * transfers, announced-but-unmade handoffs and tokens; the A/B interval on synthetic results; and
 * a malformed case line refused with its number.
 */
import { describe, expect, it } from "vitest";
import { compare, type EvalSample, htmlReport, parseCases, runEval, score, scoreTable } from "../../src/evals/index.ts";
import { Agent, Network } from "../../src/runtime/index.ts";
import { ScriptedModel } from "../../src/testing/index.ts";

function bank(): Network {
  const cards = new Agent({ name: "cards", description: "Lost and stolen cards.", instructions: "cards" });
  const billing = new Agent({ name: "billing", description: "Charges and refunds.", instructions: "billing" });
  const triage = new Agent({ name: "triage", instructions: "route", handoffs: [cards, billing] });
  return new Network(triage, { defaultModel: "m" });
}

const transfer = (to: string) => ({ toolCalls: [{ id: `t-${to}`, name: `transfer_to_${to}`, args: {} }] });

describe("the eval runner and its scores", () => {
  it("computes routing, the confusion matrix, pass^k, handoffs, refusals, announcements and tokens as counted by hand", async () => {
    const parsed = parseCases(
      [
        JSON.stringify({ id: "refund", turns: [{ user: "refund me", expect: { holder: "billing", maxHandoffs: 1 } }] }),
        JSON.stringify({ id: "lost", turns: [{ user: "I lost my card", expect: { holder: "cards" } }] }),
      ].join("\n"),
    );
    if (!parsed.ok) throw new Error(parsed.message);
    // k = 2, one sample at a time, so the script plays in order: refund#0, refund#1, lost#0, lost#1.
    const model = new ScriptedModel([
      transfer("billing"),
      { text: "Refunded." },
      transfer("billing"),
      { text: "Refunded." },
      // lost#0: a transfer to an agent that is not there (refused), then an answer that announces one it never makes.
      { toolCalls: [{ id: "x", name: "transfer_to_nobody", args: {} }] },
      { text: "Let me transfer you to cards." },
      transfer("cards"),
      { text: "Card blocked." },
    ]);
    const samples = await runEval({ network: bank(), model, cases: parsed.cases, k: 2, concurrency: 1 });
    const scores = score(samples, { prices: { "*": { input: 1, output: 2 } } });
    expect(scores.routing).toEqual({ turns: 4, correct: 3, accuracy: 0.75 });
    expect(scores.confusion).toEqual({
      labels: ["billing", "cards", "triage"],
      counts: [
        [2, 0, 0],
        [0, 1, 1],
        [0, 0, 0],
      ],
    });
    expect(scores.perAgent.find((a) => a.agent === "cards")).toEqual({
      agent: "cards",
      expected: 2,
      predicted: 1,
      correct: 1,
      precision: 1,
      recall: 0.5,
    });
    expect(scores.perAgent.find((a) => a.agent === "billing")).toMatchObject({ precision: 1, recall: 1 });
    // pass^2: "refund" passes in both samples, "lost" in one of two.
    expect(scores.passAtK).toEqual({ passed: 1, cases: 2, rate: 0.5 });
    expect(scores.passRate).toBe(0.75);
    expect(scores.handoffsPerCase).toBe(0.75);
    // Per case, over its samples: "lost" refused once in two samples (0.5), "refund" never (0).
    expect(scores.refusedPerCase).toBe(0.25);
    expect(scores.announcedHandoffs).toBe(1);
    const tokens = samples.flatMap((s) => s.turns).reduce((n, t) => n + t.inputTokens + t.outputTokens, 0);
    expect(scores.tokens.input + scores.tokens.output).toBe(tokens);
    expect(scores.cost).toBeCloseTo((scores.tokens.input + 2 * scores.tokens.output) / 1e6);
    const failed = samples.find((s) => !s.pass)!;
    expect([failed.caseId, failed.sample, failed.turns[0]!.failures, failed.path]).toEqual([
      "lost",
      0,
      ["held by triage, expected cards"],
      ["triage"],
    ]);
    // Its trace, by the trace builder: the turn, triage's tenure with its two model calls and the refused transfer.
    const spans = failed.turns[0]!.trace.spans;
    expect(spans.map((s) => [s.kind, s.name])).toEqual([
      ["turn", "turn 1"],
      ["agent", "triage"],
      ["model", "model call 0"],
      ["refused-handoff", "transfer_to_nobody"],
      ["model", "model call 1"],
    ]);
    expect(spans[4]!.attributes["handoff.announced_not_made"]).toMatch(/cards/);
    expect(samples[0]!.turns[0]!.trace.spans.filter((s) => s.kind === "handoff").map((s) => s.name)).toEqual(["triage → billing"]);
    expect(scoreTable(scores)).toMatch(/routing accuracy \(turns\)\s+75\.0% \(3\/4\)/);
    expect(htmlReport(samples, scores)).not.toMatch(/<script|https?:\/\//);
  });

  it("gives the A/B difference with a 95% interval, paired by case, as computed by hand", () => {
    const sample = (caseId: string, right: boolean): EvalSample => ({
      caseId,
      sample: 0,
      tags: [],
      pass: right,
      path: [],
      transcript: [],
      turns: [
        {
          user: "",
          expect: { holder: "billing" },
          holder: right ? "billing" : "triage",
          reached: [],
          calls: [],
          handoffs: 0,
          refused: 0,
          announced: 0,
          inputTokens: 0,
          outputTokens: 0,
          latencyMs: 0,
          failures: [],
          trace: { turn: 1, traceId: "0".repeat(32), spans: [] },
        },
      ],
    });
    const ids = Array.from({ length: 10 }, (_, i) => `c${i}`);
    const a = ids.map((id, i) => sample(id, i < 5));
    const b = ids.map((id, i) => sample(id, i < 8));
    const result = compare(a, b);
    // Differences: five 0s, three 1s, two 0s: mean 0.3, sd √(2.1 / 9), half-width 1.96 · sd / √10.
    const half = (1.96 * Math.sqrt(2.1 / 9)) / Math.sqrt(10);
    expect(result.a).toBe(0.5);
    expect(result.b).toBe(0.8);
    expect(result.difference).toBeCloseTo(0.3);
    expect(result.interval[0]).toBeCloseTo(0.3 - half);
    expect(result.interval[1]).toBeCloseTo(0.3 + half);
    expect(result.significant).toBe(true);
    // The same runs compared with themselves: no difference, and an interval of zero width that is not significant.
    expect(compare(a, a)).toMatchObject({ difference: 0, interval: [0, 0], significant: false });
  });

  it("refuses a malformed case line with its number and what is wrong", () => {
    const good = JSON.stringify({ id: "a", turns: [{ user: "hi" }] });
    expect(parseCases(`${good}\n\n{"id": "b", "turns": []}`)).toEqual({
      ok: false,
      line: 3,
      message: expect.stringMatching(/turns.*at least one/),
    });
    expect(parseCases(`${good}\n{oops`)).toMatchObject({ ok: false, line: 2, message: expect.stringMatching(/^not JSON/) });
    expect(parseCases(`${good}\n${good}`)).toMatchObject({ ok: false, line: 2, message: expect.stringMatching(/used twice/) });
    expect(parseCases(`${good}\n{"id":"c","turns":[{"user":"x","expect":{"holdr":"billing"}}]}`)).toMatchObject({
      ok: false,
      line: 2,
      message: expect.stringMatching(/holdr/),
    });
  });
});
