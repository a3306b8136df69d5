/**
 * The schedule across a killed process, under the real `wrangler dev` (SIGKILL) with the offline
 * demo model: an approval's deadline (APPROVAL_EXPIRES_IN=3s) passes while no process runs, and the
 * next start's alarm declines the call and resumes the turn, once; and a process killed inside the
 * alarm's turn does not run the entry again on the next start (its decision is stored once).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import type { Message } from "../../src/runtime/index.ts";
import { until } from "../support/until.ts";
import { chat, startWranglerDev } from "./wrangler-dev.ts";

const root = mkdtempSync(join(tmpdir(), "handoff-crash-schedule-"));
after(() => rmSync(root, { recursive: true, force: true }));

interface View {
  status: string;
  activeAgent: string;
  turn: number;
  messages: Message[];
  pendingApprovals: unknown[];
}

/** The view, or null while the restarted Worker does not answer yet. */
const view = async (url: string, id: string): Promise<View | null> =>
  fetch(`${url}/v1/conversations/${id}`)
    .then((res) => res.json() as Promise<View>)
    .catch(() => null);
/** The view once it answers and `ok` holds of it (up to 30 s: a restart is slow on a shared machine). */
const viewOnce = (url: string, id: string, ok: (v: View) => boolean, what: string): Promise<View> =>
  until(
    () => view(url, id),
    (v): v is View => v !== null && ok(v),
    what,
    30_000,
  ) as Promise<View>;

const expiredResults = (messages: Message[]) => messages.filter((m) => m.role === "tool" && /expired and did not run/.test(m.content));

describe("the schedule when the process is killed", () => {
  it("runs an approval's deadline that passed while no process ran, on the next start, once", async () => {
    const persistTo = join(root, "between");
    const vars = { APPROVAL_EXPIRES_IN: "3s" };
    const first = await startWranglerDev({ persistTo, vars });
    try {
      const turn = await chat(first.url, "sched-between", "I was charged twice for order A1001");
      assert.equal(turn.at(-1)?.status, "awaiting_approval");
    } finally {
      await first.stop("SIGKILL");
    }
    // The deadline passes with no process running.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const second = await startWranglerDev({ persistTo, vars });
    try {
      // The alarm fires on the first touch of the object after the start, at the latest.
      const done = await viewOnce(second.url, "sched-between", (v) => v.status === "completed", "the resumed turn");
      assert.equal(expiredResults(done.messages).length, 1);
      assert.equal(findHistoryProblem(done.messages), null);
      assert.equal(done.activeAgent, "billing");
      assert.match(String(done.messages.at(-1)?.content), /did not go through/);
      const schedule = (await (await fetch(`${second.url}/v1/conversations/sched-between/schedule`)).json()) as { entries: unknown[] };
      assert.deepEqual(schedule.entries, []);
    } finally {
      await second.stop();
    }
  });

  it("does not run an entry again when the process died inside the alarm's turn", async () => {
    const persistTo = join(root, "inside");
    // The demo model types its answer slowly: the alarm's turn is still running when the process is killed.
    const vars = { APPROVAL_EXPIRES_IN: "3s", DEMO_DELAY_MS: "400" };
    const first = await startWranglerDev({ persistTo, vars });
    try {
      await chat(first.url, "sched-inside", "I was charged twice for order A1001");
      await viewOnce(first.url, "sched-inside", (v) => v.status === "running", "the alarm's turn");
    } finally {
      await first.stop("SIGKILL");
    }
    const second = await startWranglerDev({ persistTo, vars });
    try {
      const settled = await viewOnce(second.url, "sched-inside", (v) => v.status !== "running", "the recovered turn");
      // The entry left with the decision, stored before the turn ran: the next start does not decide again.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const after = await viewOnce(second.url, "sched-inside", () => true, "the view");
      assert.equal(settled.status, "failed");
      assert.equal(expiredResults(after.messages).length, 1);
      assert.equal(findHistoryProblem(after.messages), null);
      assert.deepEqual(after.pendingApprovals, []);
      const next = await chat(second.url, "sched-inside", "hello again");
      assert.equal(next.at(-1)?.type, "done");
    } finally {
      await second.stop();
    }
  });
});
