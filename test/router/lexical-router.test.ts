/**
 * The lexical router: trained from labelled examples, deterministic, small enough to bundle, and
 * sure of a message only as far as its examples say (bench/router.ts measures it on Banking77).
 */
import { describe, expect, it } from "vitest";
import { LexicalRouter, type RouterExample, trainLexicalRouter } from "../../src/router/lexical-router.ts";

const examples: RouterExample[] = [
  ["my card has not arrived yet", "cards"],
  ["when will my new card be delivered", "cards"],
  ["I lost my card, please block it", "cards"],
  ["my card was stolen last night", "cards"],
  ["how do I activate the card you sent", "cards"],
  ["I was charged twice for one payment", "billing"],
  ["there is a fee on my statement I do not know", "billing"],
  ["the refund for my purchase has not shown up", "billing"],
  ["a payment I did not make is on my account", "billing"],
  ["why was I charged for a cash withdrawal", "billing"],
  ["my transfer to a friend is still pending", "transfers"],
  ["how long does a bank transfer take", "transfers"],
  ["the transfer I sent failed", "transfers"],
  ["can I cancel a transfer I made", "transfers"],
  ["I sent money to the wrong account by transfer", "transfers"],
].map(([text, label]) => ({ text: text!, label: label! }));

describe("the lexical router", () => {
  it("routes messages it was not trained on to the agent their words point to", () => {
    const router = new LexicalRouter(trainLexicalRouter(examples));
    expect(router.route("my new card still has not arrived").label).toBe("cards");
    expect(router.route("I think I was charged twice").label).toBe("billing");
    expect(router.route("is my transfer still pending?").label).toBe("transfers");
  });

  it("gives a probability to every label and a confidence that is the margin between the first two", () => {
    const route = new LexicalRouter(trainLexicalRouter(examples)).route("my card was stolen");
    const p = Object.values(route.probabilities).sort((a, b) => b - a);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    expect(route.confidence).toBeCloseTo(p[0]! - p[1]!, 9);
    // Words it never saw say nothing: no label is preferred much.
    const unknown = new LexicalRouter(trainLexicalRouter(examples)).route("zzz qqq");
    expect(unknown.confidence).toBeLessThan(route.confidence);
  });

  it("trains the same model from the same examples, and its JSON form routes as the model does", () => {
    const first = trainLexicalRouter(examples);
    expect(JSON.stringify(trainLexicalRouter(examples))).toBe(JSON.stringify(first));
    const loaded = new LexicalRouter(JSON.parse(JSON.stringify(first)));
    expect(loaded.route("my transfer failed")).toEqual(new LexicalRouter(first).route("my transfer failed"));
    // Another seed is another order: still a model, maybe other weights.
    expect(trainLexicalRouter(examples, { seed: 7 }).labels).toEqual(["billing", "cards", "transfers"]);
  });

  it("refuses no examples, and a trained form that is not one", () => {
    expect(() => trainLexicalRouter([])).toThrow(/examples/);
    const model = trainLexicalRouter(examples);
    expect(() => new LexicalRouter({ ...model, version: 2 as 1 })).toThrow(/lexical router/);
    expect(() => new LexicalRouter({ ...model, weights: model.weights.slice(1) })).toThrow(/one per term and label/);
  });
});
