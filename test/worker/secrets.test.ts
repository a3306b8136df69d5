import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseSse } from "../support/sse.ts";
import { openSocket } from "../support/socket.ts";
import { until } from "../support/until.ts";
import { call, chat, postMessage, scenario, stored } from "../support/worker.ts";

/** The secrets the Worker under test is configured with (vitest.config.ts), in three shapes. */
const bindings = env as unknown as Record<string, string>;
const SECRETS = [bindings.OPENAI_API_KEY!, bindings.SESSION_SECRET!, bindings.ORDERS_API_TOKEN!];
const FORMS = SECRETS.flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]);

function expectClean(where: string, text: string): void {
  for (const form of FORMS) expect(text.includes(form), `${where} holds a secret`).toBe(false);
}

/** The stream, the replay, the GET view and every stored row of the conversation hold no secret. */
async function expectCleanEverywhere(conversationId: string, streamed: string): Promise<void> {
  expectClean("the stream", streamed);
  expectClean("the replay", await (await call(`/v1/conversations/${conversationId}/events?after=0`)).text());
  expectClean("the GET view", JSON.stringify(await stored(conversationId)));
  const rows = await runInDurableObject(env.CONVERSATIONS.getByName(conversationId), (_instance, state) =>
    ["state", "messages", "events", "handoffs", "turns"].map((table) =>
      JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${table}`).toArray()),
    ),
  );
  expectClean("the stored rows", rows.join("\n"));
}

const mention = `session ${SECRETS[1]} and token ${SECRETS[2]}`;

describe("configured secrets never leave the Worker", () => {
  it("a provider 401 that echoes the key: a short message of ours with the status and code", async () => {
    const s = await scenario([
      { status: 401, error: { message: `Incorrect API key provided: {{key}}; ${mention}`, code: "invalid_api_key" } },
    ]);
    const res = await postMessage(s.conversationId, s.tag("hello"));
    const text = await res.text();
    expect(parseSse(text).at(-1)).toMatchObject({
      type: "error",
      code: "model_auth_failed",
      status: 401,
      message: "The model provider answered 401 (invalid_api_key): it refused the credentials; check OPENAI_API_KEY.",
    });
    await expectCleanEverywhere(s.conversationId, text);
  });

  it("an error object inside a stream that already started", async () => {
    const chunk = JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: { role: "assistant", content: "Hel" }, finish_reason: null }],
    });
    const s = await scenario([
      {
        raw: `data: ${chunk}\n\ndata: ${JSON.stringify({ error: { message: `failed for {{key}}; ${mention}`, code: "server_error" } })}\n\n`,
      },
    ]);
    const res = await postMessage(s.conversationId, s.tag("hello"));
    const text = await res.text();
    expect(parseSse(text).at(-1)).toMatchObject({
      type: "error",
      code: "model_stream_interrupted",
      message: "The model provider reported an error inside the stream (server_error).",
    });
    await expectCleanEverywhere(s.conversationId, text);
  });

  it("a provider's HTML error page with a stack trace and file paths", async () => {
    const s = await scenario([
      { status: 502, body: `<html><pre>Error: {{key}} ${mention}\n    at handler (/srv/app/server.js:12:5)</pre></html>` },
    ]);
    const text = await (await postMessage(s.conversationId, s.tag("hello"))).text();
    const last = parseSse(text).at(-1);
    expect(last).toMatchObject({ type: "error", code: "model_unavailable", status: 502 });
    expect(JSON.stringify(last)).not.toMatch(/\/srv\/|at handler|<html/);
    await expectCleanEverywhere(s.conversationId, text);
  });

  it("model text, tool arguments and the user's own message, even with a secret split across deltas", async () => {
    const s = await scenario([
      {
        text: `Your key is ${SECRETS[0]} and ${mention}.`,
        chunkChars: 3,
        toolCalls: [{ id: "look", name: "transfer_to_billing", arguments: JSON.stringify({ reason: `key ${SECRETS[0]}` }) }],
      },
      // It ends with what could be the start of a secret: held back while it could, then sent as it is.
      { text: `Billing here; ${SECRETS[1]}; not one: ${SECRETS[1]!.slice(0, 6)}`, chunkChars: 5 },
    ]);
    const events = await chat(s.conversationId, s.tag(`my key is ${SECRETS[2]}`));
    const text = events
      .filter((e) => e.type === "text-delta")
      .map((e) => e.delta)
      .join("");
    expect(text).toBe(
      `Your key is [redacted] and session [redacted] and token [redacted].Billing here; [redacted]; not one: ${SECRETS[1]!.slice(0, 6)}`,
    );
    // Text held back while it could be a secret sends no empty deltas meanwhile.
    expect(events.filter((e) => e.type === "text-delta" && e.delta === "")).toEqual([]);
    expect(events.find((e) => e.type === "handoff")).toMatchObject({ reason: "key [redacted]" });
    await expectCleanEverywhere(s.conversationId, JSON.stringify(events));
    const view = await stored(s.conversationId);
    expect(view.messages[0]).toMatchObject({ role: "user", content: expect.stringContaining("my key is [redacted]") });
  });

  it("a delegated agent's text, even with a secret split across its deltas", async () => {
    const s = await scenario((tag) => [
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "charge" }) }] },
      { toolCalls: [{ id: "fc", name: "ask_fraud_check", arguments: JSON.stringify({ request: tag("Check order A1001.") }) }] },
      { text: `Checked; ${mention}.`, chunkChars: 3 },
      { text: "Billing: checked." },
    ]);
    const events = await chat(s.conversationId, s.tag("is this charge fraud?"));
    const nested = events.flatMap((e) => (e.type === "delegated" && e.event.type === "text-delta" ? [e.event.delta] : [])).join("");
    expect(nested).toBe("Checked; session [redacted] and token [redacted].");
    await expectCleanEverywhere(s.conversationId, JSON.stringify(events));
  });

  it("a background delegation: its request, its steps, its events on the socket, its result and the follow-up", async () => {
    const s = await scenario((tag) => [
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost" }) }] },
      {
        toolCalls: [
          { id: "bg", name: "search_for_parcel", arguments: JSON.stringify({ request: tag(`Find A1002; the token is ${SECRETS[2]}`) }) },
        ],
      },
      { text: "Started." },
      // Split across the deltas: the socket's frames carry it redacted as a stream.
      { text: `Found it; ${mention}.`, chunkChars: 3 },
      { text: `Found: ${SECRETS[0]}.` },
    ]);
    const events = await chat(s.conversationId, s.tag("my parcel is lost"));
    const socket = await openSocket(s.conversationId, `?after=${events.at(-1)!.id}`);
    const after = await until(
      () => stored(s.conversationId),
      (v) => v.turn === 2 && v.status === "completed",
      "the follow-up with the search's result",
    );
    socket.ws.close();
    // The search's model was sent the request redacted; the follow-up's note and answer are redacted.
    const searched = (await s.sent()).requests[3]!;
    expect(searched.messages.at(-1)).toMatchObject({ role: "user", content: expect.stringContaining("the token is [redacted]") });
    expect(after.messages.at(-1)).toMatchObject({ role: "assistant", content: "Found: [redacted]." });
    expectClean("the socket's frames", JSON.stringify(socket.frames));
    const nestedText = socket.frames
      .map((f) => f.data as unknown as { event?: { type: string; delta?: string } })
      .flatMap((d) => (d.event?.type === "text-delta" ? [d.event.delta] : []))
      .join("");
    expect(nestedText).toBe("Found it; session [redacted] and token [redacted].");
    await expectCleanEverywhere(s.conversationId, JSON.stringify(events));
    const rows = await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_instance, state) =>
      ["schedule", "delegations", "runs"].map((table) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${table}`).toArray())),
    );
    expectClean("the background rows", rows.join("\n"));
  });

  it("a background delegation that asks the user: its request's arguments and a decline's reason, in the view, its rows and its model's requests", async () => {
    const redeliver = {
      toolCalls: [{ id: "rd1", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1002", note: `token ${SECRETS[2]}` }) }],
    };
    const s = await scenario((tag) => [
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost" }) }] },
      { toolCalls: [{ id: "bg", name: "search_for_parcel", arguments: JSON.stringify({ request: tag("Find A1002, redeliver it") }) }] },
      { text: "Started." },
      redeliver,
      { text: "No redelivery." },
      { text: "Told." },
    ]);
    const events = await chat(s.conversationId, s.tag("my parcel is lost"));
    const waiting = await until(
      () => stored(s.conversationId),
      (v) => (v as unknown as { pendingRequests: unknown[] }).pendingRequests.length === 1,
      "the search's question",
    );
    expect(JSON.stringify(waiting)).toContain(`"note":"token [redacted]"`);
    const declined = await call(`/v1/conversations/${s.conversationId}/decisions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "rd1", approved: false, reason: `not now, ${mention}` }] }),
    });
    expect(declined.status).toBe(202);
    await until(
      () => stored(s.conversationId),
      (v) => v.turn === 2 && v.status === "completed",
      "the follow-up with the search's result",
    );
    // The search's model read the decline's reason redacted.
    const resumed = JSON.stringify((await s.sent()).requests[4]!.messages);
    expect(resumed).toContain("session [redacted] and token [redacted]");
    // (The requests' own headers carry the API key: their messages are what the models read.)
    expectClean("the models' messages", JSON.stringify((await s.sent()).requests.map((r) => r.messages)));
    await expectCleanEverywhere(s.conversationId, JSON.stringify(events));
    const rows = await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_instance, state) =>
      ["delegations", "runs", "activity"].map((table) => JSON.stringify(state.storage.sql.exec(`SELECT * FROM ${table}`).toArray())),
    );
    expectClean("the background rows", rows.join("\n"));
  });

  it("HTTP error bodies", async () => {
    const res = await call(`/v1/nothing/${encodeURIComponent(SECRETS[0]!)}`);
    expect(res.status).toBe(404);
    expectClean("a 404 body", await res.text());
  });
});
