/**
 * Live updates over WebSockets accepted through the hibernation API (`ctx.acceptWebSocket`), so an
 * idle open connection keeps no object awake. Every event of every turn (a request's, the alarm's,
 * an operator's message) goes to every open socket as one JSON text frame with the SSE event's id,
 * type and data: `{"id": 12, "type": "text-delta", "data": {…}}`. A socket opened with `?after=<id>`
 * first gets what it missed, then the live events, each once and in order.
 */
import * as z from "zod";
import type { Redactor } from "../runtime/redact.ts";
import type { StoredEvent } from "../wire/sse.ts";
import type { RunEvent } from "../runtime/events.ts";
import { type Decision, DecisionSchema } from "../runtime/wait/requests.ts";
import type { Requester } from "./conversation-api.ts";
import type { ConversationState } from "./storage/conversation-store.ts";
import { fail, type ConversationResult } from "./results.ts";
import type { EventBatches } from "./turns/event-stream.ts";

/** What a client may send: a message that starts a turn, or decisions on the calls that wait. */
export type SocketRequest = ({ type: "message"; message: string; files?: string[] } | { type: "decision"; decisions: Decision[] }) & {
  /** The W3C trace context the turn is traced under; without one, each socket turn is a trace of its own. */
  traceparent?: string;
};

/** What a socket remembers across hibernation: who opened it (less the upgrade's trace context, which is no turn's parent). */
interface Attachment {
  requester: Requester;
}

export class ConversationSockets {
  readonly #ctx: DurableObjectState;
  readonly #redactor: Redactor;
  /** The last event id each socket was sent (in memory: after a hibernation only new events are sent, all of them). */
  readonly #sent = new WeakMap<WebSocket, number>();
  /** Sockets still catching up: the live fan-out leaves them to their catch-up, which sends in order. */
  readonly #catchingUp = new WeakSet<WebSocket>();

  constructor(ctx: DurableObjectState, redactor: Redactor) {
    this.#ctx = ctx;
    this.#redactor = redactor;
    // Keep-alive pings are answered without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('{"type":"ping"}', '{"type":"pong"}'));
  }

  /** Accepts a socket for `requester`; its catch-up (what it missed, then the running leg) is `batches`. */
  accept(requester: Requester, afterId: number, batches: EventBatches): { response: Response; catchUp: Promise<void> } {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.#ctx.acceptWebSocket(server);
    const { traceparent: _upgrade, ...opener } = requester;
    server.serializeAttachment({ requester: opener } satisfies Attachment);
    this.#sent.set(server, afterId);
    this.#catchingUp.add(server);
    return { response: new Response(null, { status: 101, webSocket: client }), catchUp: this.#catchUp(server, batches) };
  }

  /** Who opened a socket. */
  requesterOf(ws: WebSocket): Requester | null {
    return (ws.deserializeAttachment() as Attachment | null)?.requester ?? null;
  }

  /** Sends an event to every open socket that is not catching up (its frame made once for all). */
  readonly tap = (event: StoredEvent): void => {
    const sockets = this.#ctx.getWebSockets();
    if (!sockets.length) return;
    const frame = socketFrame(event);
    for (const ws of sockets) if (!this.#catchingUp.has(ws)) this.#send(ws, event, frame);
  };

  /**
   * An event that is in no turn's log (a background delegation's, as it comes) to every open socket, catching up or not
   * (no catch-up will bring it): a frame with no id, which a client resuming with ?after= does not count.
   */
  readonly tell = (event: RunEvent): void => {
    const frame = JSON.stringify({ type: event.type, data: event });
    for (const ws of this.#ctx.getWebSockets()) {
      try {
        ws.send(frame);
      } catch {
        // A socket closing as it is sent to.
      }
    }
  };

  /** A frame that is not an event: an answer to what the client sent. */
  reply(
    ws: WebSocket,
    frame:
      | { type: "error"; data: { code: string; message: string; details?: unknown } }
      | { type: "accepted"; data: Record<string, unknown> },
  ): void {
    ws.send(JSON.stringify(this.#redactor.value(frame)));
  }

  async #catchUp(ws: WebSocket, batches: EventBatches): Promise<void> {
    const source = batches(() => ws.close(1013, "Too far behind: reconnect with ?after=<last id>."));
    try {
      for (let batch = await source.next(); batch; batch = await source.next()) for (const event of batch) this.#send(ws, event);
    } finally {
      source.close();
      this.#catchingUp.delete(ws);
    }
  }

  #send(ws: WebSocket, event: StoredEvent, frame = socketFrame(event)): void {
    if (event.id <= (this.#sent.get(ws) ?? 0)) return;
    this.#sent.set(ws, event.id);
    try {
      ws.send(frame);
    } catch {
      // A socket closing as it is sent to: its client reconnects with ?after=.
    }
  }
}

/** An event as a socket carries it: one JSON text frame with the SSE event's id, type and data. */
function socketFrame(event: StoredEvent): string {
  return JSON.stringify({ id: event.id, type: event.type, data: event });
}

/** What a client's frame may be: built on a Worker's first frame (a Worker whose clients use SSE never builds it). */
const SocketFrame = z.lazy(() => {
  /** A W3C `traceparent` a frame may carry, so its turn joins the client's trace. */
  const traceparent = z
    .string()
    .regex(
      /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/,
      "`traceparent` must be a W3C trace context (00-<32 hex>-<16 hex>-<2 hex>).",
    )
    .optional();
  /** A message frame names its text `message`, as every HTTP body does; `text` is still read, for this release (deprecated). */
  const MessageFrame = z.strictObject({
    type: z.literal("message"),
    traceparent,
    message: z.string().optional(),
    text: z.string().optional(),
    /** Files uploaded to …/files first, by id: a frame carries no bytes. */
    files: z
      .array(z.strictObject({ fileId: z.string().min(1) }), { error: "`files` is a list of { fileId } (upload to …/files first)." })
      .max(100)
      .optional(),
  });
  return z.discriminatedUnion("type", [
    MessageFrame,
    z.strictObject({
      type: z.literal("decision"),
      traceparent,
      decisions: z.array(DecisionSchema).min(1, "`decisions` needs at least one decision."),
    }),
  ]);
});

/** A client's frame, checked: what it asks for, or why it is refused. */
export function parseSocketRequest(raw: string | ArrayBuffer): SocketRequest | { error: string } {
  if (typeof raw !== "string") return { error: "Frames are JSON text." };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { error: "The frame is not JSON." };
  }
  const parsed = SocketFrame.safeParse(value);
  if (parsed.success && parsed.data.type === "message") {
    const { message, text, traceparent, files } = parsed.data;
    if ((message === undefined) === (text === undefined))
      return { error: 'Send the message\'s text as `message` (one field): {"type":"message","message":"…"}.' };
    const words = (message ?? text)!;
    if (!words.trim() && !files?.length)
      return { error: "`message` must not be empty. Send words, or files by id (`files`: [{ fileId }])." };
    const ids = files?.length ? { files: files.map((file) => file.fileId) } : {};
    return { type: "message", message: words, ...ids, ...(traceparent ? { traceparent } : {}) };
  }
  if (parsed.success) return parsed.data as SocketRequest;
  return {
    error: `${z.prettifyError(parsed.error)} Send {"type":"message","message":"…"} or {"type":"decision","decisions":[{"toolCallId":"…","approved":true}]}.`,
  };
}

/** The header the Worker names the requester in when it hands the object a socket to open (only the Worker reaches the object). */
export const SOCKET_REQUESTER_HEADER = "x-handoff-requester";

/** Who opens a socket and from which event, as the Worker sent it; null for anything else. */
export function socketAsk(request: Request): { requester: Requester; after: number } | null {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
  try {
    const requester = JSON.parse(request.headers.get(SOCKET_REQUESTER_HEADER) ?? "null") as Requester | null;
    const after = Number(new URL(request.url).searchParams.get("after") ?? "0");
    return requester && typeof requester.conversationId === "string" && Number.isSafeInteger(after) && after >= 0
      ? { requester, after }
      : null;
  } catch {
    return null;
  }
}

/** What opening a socket needs of the conversation. */
export interface SocketOpening {
  sockets: ConversationSockets;
  admit(requester: Requester): ConversationResult<ConversationState>;
  catchUp(state: ConversationState, afterId: number): EventBatches;
  waitUntil(promise: Promise<unknown>): void;
}

/** Accepts the socket the Worker asked for, or answers why not (a refusal, for the Worker to map). */
export function openSocket(request: Request, conversation: SocketOpening): Response {
  const asked = socketAsk(request);
  if (!asked) return Response.json(fail("invalid_request", "Only the Worker opens sockets here."), { status: 400 });
  const admitted = conversation.admit(asked.requester);
  if (!admitted.ok) return Response.json(admitted, { status: 400 });
  const { lastEventId } = admitted.value;
  if (asked.after > lastEventId)
    return Response.json(fail("event_id_unknown", `Event ${asked.after} is past this conversation's last event (${lastEventId}).`), {
      status: 400,
    });
  const { response, catchUp } = conversation.sockets.accept(
    asked.requester,
    asked.after,
    conversation.catchUp(admitted.value, asked.after),
  );
  conversation.waitUntil(catchUp);
  return response;
}

/** What answering a client's frame needs of the conversation. */
export interface SocketFrames {
  sockets: ConversationSockets;
  /** Starts the message's turn, read by the sockets alone. */
  send(requester: Requester, text: string, files?: string[]): Promise<ConversationResult<unknown>>;
  /** Records decisions, resuming the turn (read by the sockets alone) once none waits. */
  decide(requester: Requester, decisions: Decision[]): Promise<ConversationResult<unknown>>;
}

/** A client's frame: starts a turn or decides, and says so (or why not); the events themselves reach every socket. */
export async function answerFrame(ws: WebSocket, raw: string | ArrayBuffer, conversation: SocketFrames): Promise<void> {
  const { sockets } = conversation;
  const requester = sockets.requesterOf(ws);
  const request = parseSocketRequest(raw);
  if (!requester || "error" in request)
    return sockets.reply(ws, {
      type: "error",
      data: { code: "invalid_request", message: "error" in request ? request.error : "Unknown socket." },
    });
  const asking = { ...requester, ...(request.traceparent ? { traceparent: request.traceparent } : {}) };
  const result =
    request.type === "message"
      ? await conversation.send(asking, request.message, request.files)
      : await conversation.decide(asking, request.decisions);
  if (!result.ok) return sockets.reply(ws, { type: "error", data: result.error });
  sockets.reply(ws, { type: "accepted", data: { request: request.type } });
}
