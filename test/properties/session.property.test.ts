/**
 * Invariants of the whole service under random request sequences: messages answered by a fake
 * provider scripted at random (text, valid and broken tool calls, approval-gated refunds,
 * transfers to real and invented agents, provider errors, cut and dropped streams), approvals,
 * unknown approvals, reconnects, deletes and evictions, all through the Worker's fetch handler.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import type { ScriptedAnswer } from "../node/fake-openai-server.ts";
import { parseSse, type ReceivedEvent } from "../support/sse.ts";
import { call, postMessage, scenario, stored } from "../support/worker.ts";

const args = (value: unknown) => JSON.stringify(value);

const answer: fc.Arbitrary<ScriptedAnswer> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<ScriptedAnswer>({ text: "All sorted." }, { text: "" }) },
  {
    weight: 6,
    arbitrary: fc
      .array(
        fc.constantFrom(
          { name: "lookup_order", arguments: args({ orderId: "A1001" }) },
          { name: "lookup_order", arguments: "{broken" },
          { name: "refund", arguments: args({ orderId: "A1002", amountUsd: 10 }) },
          { name: "sum_numbers", arguments: args({ a: "one", b: 2 }) },
          { name: "transfer_to_billing", arguments: args({ reason: "money" }) },
          { name: "transfer_to_shipping", arguments: "{}" },
          { name: "transfer_to_calculator", arguments: "{}" },
          { name: "transfer_to_triage", arguments: "{}" },
          { name: "transfer_to_nobody", arguments: "{}" },
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((toolCalls) => ({ text: "Working on it.", toolCalls })),
  },
  { weight: 1, arbitrary: fc.constantFrom<ScriptedAnswer>({ status: 500, error: { message: "down" } }, { status: 429, error: { message: "slow" } }, { text: "cut short here", endAfter: 2 }, { text: "dropped here", dropAfter: 2 }) },
);

type Op = { kind: "message" } | { kind: "approve"; approved: boolean } | { kind: "unknown-approval" } | { kind: "reconnect"; back: number } | { kind: "delete" } | { kind: "evict" };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: "message" as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("approve" as const), approved: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "unknown-approval" as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("reconnect" as const), back: fc.nat({ max: 12 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "delete" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "evict" as const }) },
);

/** Checks one stream's framing: one terminal event, last; ids consecutive. */
function checkStream(events: ReceivedEvent[]): void {
  expect(events.filter((e) => e.type === "done" || e.type === "error")).toHaveLength(1);
  expect(["done", "error"]).toContain(events.at(-1)!.type);
  for (let i = 1; i < events.length; i++) expect(events[i]!.id).toBe(events[i - 1]!.id + 1);
}

describe("service invariants (fast-check, through the Worker)", () => {
  const runs = Math.max(4, Math.round(inject("propertyRuns") / 10));
  it(`hold under random request sequences (${runs} runs, seed ${inject("propertySeed")})`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { minLength: 20, maxLength: 20 }), fc.array(op, { minLength: 1, maxLength: 8 }), async (answers, ops) => {
        const s = await scenario(answers);
        const id = s.conversationId;
        const seen = new Map<number, ReceivedEvent>();
        let handoffs = 0;
        let first = true;
        for (const operation of ops) {
          let res: Response | undefined;
          if (operation.kind === "message") {
            res = await postMessage(id, first ? s.tag("help me") : "more");
            first = false;
          } else if (operation.kind === "approve" || operation.kind === "unknown-approval") {
            const view = await call(`/v1/conversations/${id}`);
            const pending = view.status === 200 ? ((await view.json()) as { pendingApprovals: Array<{ toolCallId: string }> }).pendingApprovals : [];
            const decisions = operation.kind === "approve" ? pending.map((p) => ({ toolCallId: p.toolCallId, approved: operation.approved })) : [{ toolCallId: "no-such-call", approved: true }];
            if (decisions.length === 0) continue;
            res = await call(`/v1/conversations/${id}/approvals`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ decisions }) });
            if (operation.kind === "unknown-approval") expect([404, 409]).toContain(res.status);
          } else if (operation.kind === "reconnect") {
            const last = Math.max(0, ...seen.keys());
            const after = Math.max(0, last - operation.back);
            const replay = await call(`/v1/conversations/${id}/events`, { headers: { "last-event-id": String(after) } });
            if (replay.status === 200) {
              const events = parseSse(await replay.text());
              // A reconnect picks up after the id given, in order, agreeing with what was streamed.
              for (const [i, event] of events.entries()) {
                expect(event.id).toBeGreaterThan(after);
                if (i > 0) expect(event.id).toBeGreaterThan(events[i - 1]!.id);
                if (seen.has(event.id)) expect(event).toEqual(seen.get(event.id));
              }
            }
            continue;
          } else if (operation.kind === "delete") {
            const deleted = await call(`/v1/conversations/${id}`, { method: "DELETE" });
            expect([204, 404]).toContain(deleted.status);
            if (deleted.status === 204) {
              seen.clear();
              handoffs = 0;
            }
            continue;
          } else {
            await evictDurableObject(env.CONVERSATIONS.getByName(id)).catch(() => {});
            continue;
          }
          expect(res.status).not.toBe(500);
          if (res.status === 200) {
            const events = parseSse(await res.text());
            checkStream(events);
            for (const event of events) seen.set(event.id, event);
            handoffs += events.filter((e) => e.type === "handoff").length;
          } else {
            const body = (await res.json()) as { error?: { code: string } };
            expect(body.error?.code).toBeTruthy();
          }
          const view = await call(`/v1/conversations/${id}`);
          if (view.status !== 200) continue;
          const state = await stored(id);
          // Handoff counters equal the handoff events ever sent; nothing is stored twice or unseen.
          expect(state.handoffCount).toBe(handoffs);
          const storedResults = state.messages.flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
          expect(new Set(storedResults).size).toBe(storedResults.length);
          const streamedResults = new Set([...seen.values()].flatMap((e) => (e.type === "tool-result" ? [e.toolCallId] : [])));
          for (const toolCallId of storedResults) expect(streamedResults.has(toolCallId)).toBe(true);
          expect(["billing", "shipping", "calculator", "triage"]).toContain(state.activeAgent);
        }
      }),
      { numRuns: runs, seed: inject("propertySeed") },
    );
  });
});
