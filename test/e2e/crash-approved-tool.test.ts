/**
 * The process dies while an approved tool runs: wrangler dev is killed with SIGKILL in the middle
 * of a 20-second refund, started again on the same storage, and the conversation is not locked:
 * the refund is answered as interrupted (it may or may not have taken effect) and new messages go
 * through, to an agent that can see what happened.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, it } from "node:test";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { INTERRUPTED_CALL } from "../../src/runtime/wait/suspension.ts";
import type { Message } from "../../src/runtime/index.ts";
import { startFakeOpenAI } from "../node/fake-openai-server.ts";
import { chat, parseSse, startWranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-crash-tool-"));
const fake = await startFakeOpenAI();
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e" };
const config = new URL("./fixtures/slow-tool/wrangler.toml", import.meta.url).pathname;

after(async () => {
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
});

it("settles an approved call cut off by a crash and takes messages again", async () => {
  const id = "scncrashtool";
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({
      id,
      answers: [
        { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
        { toolCalls: [{ id: "r1", name: "slow_refund", arguments: JSON.stringify({ orderId: "A1001" }) }] },
        { text: "Let me check whether the refund went through." },
      ],
    }),
  });

  const first = await startWranglerDev({ persistTo, vars, config });
  try {
    const turn = await chat(first.url, "tool-crash", `refund A1001 [${id}]`);
    assert.deepEqual(turn.at(-1), { ...turn.at(-1), type: "done", status: "awaiting_approval" });
    const res = await fetch(`${first.url}/v1/conversations/tool-crash/approvals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "r1", approved: true }] }),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("event: run-start")) text += new TextDecoder().decode((await reader.read()).value);
    // The refund is running now, for 20 seconds.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    await first.stop("SIGKILL");
  }

  const second = await startWranglerDev({ persistTo, vars, config });
  try {
    const view = (await (await fetch(`${second.url}/v1/conversations/tool-crash`)).json()) as {
      status: string;
      activeAgent: string;
      pendingApprovals: unknown[];
      messages: Message[];
    };
    assert.equal(view.status, "failed");
    assert.equal(view.activeAgent, "billing");
    assert.deepEqual(view.pendingApprovals, []);
    assert.equal(findHistoryProblem(view.messages), null);
    assert.deepEqual(view.messages.at(-1), {
      role: "tool",
      toolCallId: "r1",
      name: "slow_refund",
      content: INTERRUPTED_CALL,
      isError: true,
      approval: { approved: true },
    });

    const again = await fetch(`${second.url}/v1/conversations/tool-crash/approvals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "r1", approved: true }] }),
    });
    assert.equal(again.status, 409);

    const next = await chat(second.url, "tool-crash", "did the refund go through?");
    assert.deepEqual(next.at(-1), {
      ...next.at(-1),
      type: "done",
      agent: "billing",
      text: "Let me check whether the refund went through.",
    });
    const sent = (await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as {
      requests: Array<{ messages: Array<{ role: string; tool_call_id?: string; content: string }> }>;
    };
    assert.equal(sent.requests.at(-1)!.messages.find((m) => m.role === "tool" && m.tool_call_id === "r1")?.content, INTERRUPTED_CALL);
    const replay = parseSse(await (await fetch(`${second.url}/v1/conversations/tool-crash/events?after=0`)).text());
    assert.equal(replay.at(-1)?.type, "done");
  } finally {
    await second.stop();
  }
});
