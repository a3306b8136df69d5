/**
 * The process dies while a tool that needs no approval runs (a local one, and one on an MCP server
 * that did receive the call): wrangler dev is killed with SIGKILL, started again on the same
 * storage, and the call is in the history, answered as interrupted (it may or may not have taken
 * effect), exactly once; the model is told on the next turn, and the MCP server saw the call's
 * idempotency key in its `_meta`.
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
import { startMcpTestServer } from "../node/mcp-test-server.ts";
import { chat, startWranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-crash-running-"));
const fake = await startFakeOpenAI();
const mcp = await startMcpTestServer();
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e", SLOW_MCP_URL: `${mcp.url}/stateful/crash/mcp` };
const config = new URL("./fixtures/slow-tool/wrangler.toml", import.meta.url).pathname;

after(async () => {
  await Promise.all([fake.close(), mcp.close()]);
  rmSync(persistTo, { recursive: true, force: true });
});

/** Starts a turn whose second step runs the slow call, and kills the process once `running()` says the call is under way. */
async function killWhileRunning(id: string, conversation: string, message: string, running: () => Promise<boolean>): Promise<void> {
  const first = await startWranglerDev({ persistTo, vars, config });
  try {
    const res = await fetch(`${first.url}/v1/conversations/${conversation}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: `${message} [${id}]` }),
    });
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes('"plan":"tool"')) text += new TextDecoder().decode((await reader.read()).value);
    for (let i = 0; i < 100 && !(await running()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(await running(), true);
  } finally {
    await first.stop("SIGKILL");
  }
}

/** Triage hands the conversation over, the specialist makes the slow call, and after the restart answers the next message. */
async function scenario(id: string, to: string, call: { id: string; name: string; arguments: string }): Promise<void> {
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({
      id,
      answers: [
        { toolCalls: [{ id: "t0", name: `transfer_to_${to}`, arguments: "{}" }] },
        { toolCalls: [call] },
        { text: "Let me check." },
      ],
    }),
  });
}

/** After the restart: the call answered as interrupted, once, in a valid history; the next turn tells the model. */
async function checkAfterRestart(id: string, conversation: string, callId: string): Promise<void> {
  const second = await startWranglerDev({ persistTo, vars, config });
  try {
    const view = (await (await fetch(`${second.url}/v1/conversations/${conversation}`)).json()) as { status: string; messages: Message[] };
    assert.equal(view.status, "failed");
    assert.equal(findHistoryProblem(view.messages), null);
    const answers = view.messages.filter((m) => m.role === "tool" && m.toolCallId === callId);
    assert.equal(answers.length, 1);
    assert.deepEqual(
      { ...answers[0], name: undefined },
      { role: "tool", toolCallId: callId, name: undefined, content: INTERRUPTED_CALL, isError: true },
    );
    const next = await chat(second.url, conversation, "did it go through?");
    assert.equal(next.at(-1)?.type, "done");
    const sent = (await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as {
      requests: Array<{ messages: Array<{ role: string; tool_call_id?: string; content: string }> }>;
    };
    assert.equal(sent.requests.at(-1)!.messages.find((m) => m.role === "tool" && m.tool_call_id === callId)?.content, INTERRUPTED_CALL);
  } finally {
    await second.stop();
  }
}

it("keeps a local tool call that was running when the process died, answered as interrupted", async () => {
  const id = "scncrashlocal";
  await scenario(id, "billing", { id: "c1", name: "slow_charge", arguments: JSON.stringify({ orderId: "A1001" }) });
  let since = 0;
  await killWhileRunning(id, "crash-local", "charge A1001", async () => {
    since ||= Date.now();
    // The tool-call event has come: the tool starts right after it; give it a second.
    return Date.now() - since > 1_000;
  });
  await checkAfterRestart(id, "crash-local", "c1");
});

it("keeps an MCP tool call the server received when the process died, with its idempotency key, answered as interrupted", async () => {
  const id = "scncrashmcp";
  await scenario(id, "shipping", { id: "m1", name: "slow_slow_echo", arguments: JSON.stringify({ text: "moved", ms: 20_000 }) });
  const stats = async () =>
    ((await (await fetch(`${mcp.url}/__mcp/stats`)).json()) as Record<string, { toolsCall: number; callMeta: unknown[] }>)[
      "/stateful/crash"
    ];
  await killWhileRunning(id, "crash-mcp", "where is A1001", async () => ((await stats())?.toolsCall ?? 0) > 0);
  await checkAfterRestart(id, "crash-mcp", "m1");
  const seen = await stats();
  assert.equal(seen?.toolsCall, 1);
  assert.deepEqual(seen?.callMeta, [{ "handoff-runtime/idempotency-key": "crash-mcp:m1" }]);
});
