/**
 * GET /v1/conversations/:id/socket: a WebSocket accepted by the conversation's Durable Object
 * through the hibernation API. Each event is one JSON text frame `{ id, type, data }` with the SSE
 * event's id and data; `?after=` resumes across turns; a client sends a message or decisions, and
 * an operator's message reaches an open socket. (Turns run by the alarm: test/configured-schedule.)
 */
import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConversationSockets, SOCKET_REQUESTER_HEADER } from "../../src/conversation/sockets.ts";
import { Redactor } from "../../src/runtime/redact.ts";
import { openSocket as open } from "../support/socket.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const asFrames = (events: Array<Record<string, unknown> & { id: number; type: string }>) =>
  events.map((event) => {
    const { sseEvent: _sse, ...data } = event as Record<string, unknown>;
    return { id: event.id, type: event.type, data };
  });

describe("the conversation's WebSocket", () => {
  it("carries each turn's events with the SSE stream's ids and data, across turns, and resumes after an id", async () => {
    const s = await scenario([
      { text: "Hello there.", toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "money" }) }] },
      { text: "Billing here." },
      { text: "Second answer." },
    ]);
    const first = await chat(s.conversationId, s.tag("my bill"));
    const socket = await open(s.conversationId);
    await socket.until((f) => f.id === first.at(-1)!.id, "the first turn's last event");
    const second = await chat(s.conversationId, s.tag("again"));
    await socket.until((f) => f.id === second.at(-1)!.id, "the second turn's last event");
    expect(socket.frames).toEqual(asFrames([...first, ...second] as never));

    // ?after= resumes: only what came after, across turns.
    const resumed = await open(s.conversationId, `?after=${first[2]!.id}`);
    await resumed.until((f) => f.id === second.at(-1)!.id, "the end");
    expect(resumed.frames).toEqual(asFrames([...first.slice(3), ...second] as never));
    socket.ws.close();
    resumed.ws.close();
  });

  it("takes a message and decisions as frames, answers each, and streams the turns they start", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Refunded." },
    ]);
    await chat(s.conversationId, s.tag("hello"));
    const past = await call(`/v1/conversations/${s.conversationId}/socket?after=999999`, { headers: { upgrade: "websocket" } });
    expect([past.status, ((await past.json()) as { error: { code: string } }).error.code]).toEqual([409, "event_id_unknown"]);
    // After the last event: nothing missed, accepted.
    const caughtUp = await open(s.conversationId, `?after=${(await stored(s.conversationId)).lastEventId}`);
    caughtUp.ws.close();
    const live = await open(s.conversationId);
    live.send({ type: "nonsense" });
    expect(await live.until((f) => f.type === "error", "the refusal")).toMatchObject({ data: { code: "invalid_request" } });
    expect(live.frames.find((f) => f.type === "error")!.id).toBeUndefined();
    // A message's text is `message`, as in every HTTP body; both it and the deprecated `text` is one too many.
    live.send({ type: "message", message: "a", text: "b" });
    await live.until((f) => f.type === "error" && String(f.data.message).includes("as `message` (one field)"), "the refusal of two texts");
    // A blank message and a binary frame are refused too, each with what to send instead.
    live.send({ type: "message", message: "   " });
    await live.until((f) => f.type === "error" && String(f.data.message).includes("`message` must not be empty."), "the blank message");
    live.ws.send(new Uint8Array([123, 125]));
    await live.until((f) => f.type === "error" && f.data.message === "Frames are JSON text.", "the binary frame");
    live.ws.send("{not json");
    await live.until((f) => f.type === "error" && f.data.message === "The frame is not JSON.", "the frame that is not JSON");
    expect(live.frames.filter((f) => f.type === "error").map((f) => f.data.code)).toEqual(Array(5).fill("invalid_request"));
    expect(live.frames.filter((f) => f.type === "accepted")).toEqual([]);
    live.send({ type: "decision", decisions: [{ toolCallId: "rf", approved: true }] });
    await live.until((f) => f.type === "done" && f.data.status === "completed", "the resumed turn");
    expect(live.frames.filter((f) => f.type === "accepted")).toEqual([{ type: "accepted", data: { request: "decision" } }]);
    expect(live.frames.some((f) => f.type === "tool-result" && f.data.toolCallId === "rf")).toBe(true);
    live.ws.close();
  });

  it("reaches an open socket with an operator's message, and refuses what is not a WebSocket upgrade", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "a person" }) }] },
    ]);
    await chat(s.conversationId, s.tag("a person, please"));
    const socket = await open(s.conversationId);
    const sent = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "Sam here." }),
    });
    expect(sent.status).toBe(200);
    const frame = await socket.until((f) => f.type === "operator-message", "the person's message");
    expect(frame).toMatchObject({ id: expect.any(Number), data: { text: "Sam here.", operator: "Sam", agent: "support-desk" } });
    const plain = await call(`/v1/conversations/${s.conversationId}/socket`);
    expect([plain.status, await plain.json()]).toEqual([
      426,
      {
        error: {
          code: "upgrade_required",
          message: "GET …/socket upgrades to a WebSocket: send Upgrade: websocket (new WebSocket(url) does).",
        },
      },
    ]);
    const badCursor = await call(`/v1/conversations/${s.conversationId}/socket?after=4x`, { headers: { upgrade: "websocket" } });
    expect([badCursor.status, await badCursor.json()]).toEqual([
      400,
      { error: { code: "invalid_request", message: "?after= must be an event id in decimal digits, such as 42." } },
    ]);
    const missing = await call("/v1/conversations/never-made/socket", { headers: { upgrade: "websocket" } });
    expect(missing.status).toBe(404);
    socket.ws.close();
  });
});

describe("the object's own socket door (reached only through the Worker)", () => {
  it("refuses what is not the Worker's upgrade, naming why, and opens the Worker's", async () => {
    const s = await scenario([{ text: "Hello." }]);
    const first = await chat(s.conversationId, s.tag("hi"));
    const object = env.CONVERSATIONS.getByName(s.conversationId);
    const requester = JSON.stringify({ conversationId: s.conversationId });
    const knock = async (headers: Record<string, string>, query = "") => {
      const res = await object.fetch(`https://conversation/socket${query}`, { headers });
      return [res.status, res.status === 101 ? null : await res.json()];
    };
    const notTheWorker = [400, { ok: false, error: { code: "invalid_request", message: "Only the Worker opens sockets here." } }];
    expect(await knock({ [SOCKET_REQUESTER_HEADER]: requester })).toEqual(notTheWorker);
    expect(await knock({ upgrade: "websocket" })).toEqual(notTheWorker);
    expect(await knock({ upgrade: "websocket", [SOCKET_REQUESTER_HEADER]: "{not json" })).toEqual(notTheWorker);
    expect(await knock({ upgrade: "websocket", [SOCKET_REQUESTER_HEADER]: "{}" })).toEqual(notTheWorker);
    for (const after of ["-1", "1.5", "x"])
      expect(await knock({ upgrade: "websocket", [SOCKET_REQUESTER_HEADER]: requester }, `?after=${after}`)).toEqual(notTheWorker);
    // A requester the conversation does not admit (a grant it never gave) is told why.
    expect(
      await knock({
        upgrade: "websocket",
        [SOCKET_REQUESTER_HEADER]: JSON.stringify({ conversationId: s.conversationId, grant: "forged" }),
      }),
    ).toEqual([
      400,
      {
        ok: false,
        error: {
          code: "token_revoked",
          message: "This conversation token was revoked: the conversation was deleted or its tokens were rotated. Ask for a new token.",
        },
      },
    ]);
    const last = first.at(-1)!.id;
    expect(await knock({ upgrade: "websocket", [SOCKET_REQUESTER_HEADER]: requester }, `?after=${last + 1}`)).toEqual([
      400,
      {
        ok: false,
        error: { code: "event_id_unknown", message: `Event ${last + 1} is past this conversation's last event (${last}).` },
      },
    ]);
    expect(await knock({ upgrade: "websocket", [SOCKET_REQUESTER_HEADER]: requester }, `?after=${last}`)).toEqual([101, null]);
  });
});

describe("closing the conversation's WebSocket", () => {
  /** Closes the socket from the client with `code` (none: no status) and waits for the conversation's answer. */
  async function closeAnswered(code?: number) {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hi"));
    const socket = await open(s.conversationId);
    const answered = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
    );
    if (code === undefined) socket.ws.close();
    else socket.ws.close(code, "done here");
    return answered;
  }

  it("is answered with the client's own code and reason", async () => {
    expect(await closeAnswered(4001)).toEqual({ code: 4001, reason: "done here" });
  });

  it("with no status (1005, which may not be sent) is answered 1000, a normal close", async () => {
    expect(await closeAnswered()).toMatchObject({ code: 1000 });
  });
});

describe("a socket too far behind as it catches up", () => {
  // The catch-up's reader is let go by the turn's broadcast once it is MAX_LAG_BYTES behind (the
  // bound itself: slow-readers.test.ts); a socket sends synchronously, so only a catch-up stalled
  // on storage falls that far behind, which no turn here can stage: the let-go is called directly.
  it("is closed 1013 with a reason that says how to resume", async () => {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hi"));
    // The client end is read inside the object too: its I/O belongs to the object that made it.
    const closed = await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), async (_instance, state) => {
      const sockets = new ConversationSockets(state, new Redactor([]));
      const { response, catchUp } = sockets.accept({ conversationId: s.conversationId }, 0, (letGo) => {
        letGo();
        return { next: async () => null, close: () => {} };
      });
      const client = response.webSocket!;
      const event = new Promise<{ code: number; reason: string }>((resolve) =>
        client.addEventListener("close", (closing) => resolve({ code: closing.code, reason: closing.reason })),
      );
      client.accept();
      await catchUp;
      return event;
    });
    expect(closed).toEqual({ code: 1013, reason: "Too far behind: reconnect with ?after=<last id>." });
  });
});

describe("a hibernating WebSocket", () => {
  it("stays open while the object is evicted, and receives the turn of the message that wakes it", async () => {
    const s = await scenario([{ text: "Before." }, { text: "After the object woke." }]);
    await chat(s.conversationId, s.tag("first"));
    const socket = await open(s.conversationId);
    await socket.until((f) => f.type === "done", "the first turn, caught up");
    // The object goes away (as when it hibernates and is evicted); the socket is the runtime's, not the object's.
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    // `text` is still read in this release (deprecated for `message`).
    socket.send({ type: "message", text: "second" });
    const done = await socket.until((f) => f.type === "done" && f.data.text === "After the object woke.", "the woken object's answer");
    expect(done.data).toMatchObject({ status: "completed" });
    expect(socket.frames.some((f) => f.type === "accepted")).toBe(true);
    socket.ws.close();
  });
});
