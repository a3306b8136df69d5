/**
 * The process dies mid-conversation: wrangler dev is killed with SIGKILL while a turn streams,
 * started again on the same local storage, and the conversation is intact and answerable.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, it } from "node:test";
import { findHistoryProblem, type Message } from "../../src/runtime/messages.ts";
import { startFakeOpenAI } from "../node/fake-openai-server.ts";
import { chat, parseSse, startWranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-crash-"));
const fake = await startFakeOpenAI();
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e" };

after(async () => {
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
});

it("keeps the conversation intact and answerable after SIGKILL mid-turn", async () => {
  const id = "scncrashrestart";
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({
      id,
      answers: [
        { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "double charge" }) }] },
        { text: "Billing here: which order?" },
        { text: "Looking into A1001 for you right now, one moment please", holdAfter: 3 },
        { text: "Billing again, after the restart." },
      ],
    }),
  });

  const first = await startWranglerDev({ persistTo, vars });
  let stopped = false;
  try {
    const turn1 = await chat(first.url, "crash-1", `I was charged twice [${id}]`);
    assert.equal(turn1.at(-1)?.type, "done");

    const res = await fetch(`${first.url}/v1/conversations/crash-1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "order A1001" }),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("event: text-delta")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before any text");
      text += new TextDecoder().decode(value);
    }
    await first.stop("SIGKILL");
    stopped = true;
  } finally {
    if (!stopped) await first.stop("SIGKILL");
  }
  await fetch(`${fake.url}/__scenarios/${id}/release`, { method: "POST" });

  const second = await startWranglerDev({ persistTo, vars });
  try {
    const state = (await (await fetch(`${second.url}/v1/conversations/crash-1`)).json()) as {
      activeAgent: string;
      handoffCount: number;
      status: string;
      messages: Message[];
    };
    assert.equal(state.activeAgent, "billing");
    assert.equal(state.handoffCount, 1);
    assert.equal(state.status, "failed", "the interrupted turn is recorded as failed");
    assert.equal(findHistoryProblem(state.messages), null);
    assert.deepEqual(
      state.messages.map((m) => m.role),
      ["user", "assistant", "tool", "assistant", "user"],
      "turn 1 whole, and the user message of the interrupted turn",
    );

    const turn3 = await chat(second.url, "crash-1", "are you still there?");
    assert.equal(turn3[0]?.agent, "billing");
    assert.deepEqual(turn3.at(-1), { ...turn3.at(-1), type: "done", text: "Billing again, after the restart." });
    const replay = parseSse(await (await fetch(`${second.url}/v1/conversations/crash-1/events?after=0`)).text());
    assert.deepEqual(
      replay.map((e) => e.id),
      turn3.map((e) => e.id),
    );
  } finally {
    await second.stop();
  }
});
