import { Hono } from "hono";
import type { ConversationEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { conversationScope, describeProblems, expectOk, readJson, readOptionalJson, readQuery, streamResponse } from "./request.ts";
import {
  ApprovalsBody,
  ConversationPatch,
  EventCursor,
  EventsQuery,
  MessageBody,
  OperatorHandoffBody,
  OperatorMessageBody,
  PageParams,
  RetryBody,
  TurnNumber,
} from "./schemas.ts";
import { inboxOf } from "../inbox/inbox.ts";
import type { ConversationResult } from "../conversation/results.ts";
import { SOCKET_REQUESTER_HEADER } from "../conversation/sockets.ts";
import { requesterOf, conversationObject, originOf } from "./conversation-client.ts";
import { registerFork, registerTokenIssue } from "./token-routes.ts";
import { decisionReply } from "./turn-replies.ts";
import { registerUIChatRoutes } from "./ui-chat-routes.ts";
import { messageFiles } from "./file-inputs.ts";
import { registerFileRoutes } from "./file-routes.ts";

/** Everything under /v1/conversations/:id: one middleware validates the id for all of it. */
export function conversationRoutes(): Hono<ConversationEnv> {
  const app = new Hono<ConversationEnv>();
  app.use(conversationScope());

  app.post("/messages", async (c) => {
    const { message, files } = await readJson(c, MessageBody);
    return streamResponse(await expectOk(c.var.client.sendMessage(message, messageFiles(files ?? []))));
  });

  // Runs the last turn again from its user message, or from `message` when the user edited it.
  app.post("/retry", async (c) => {
    const body = await readOptionalJson(c, RetryBody);
    return streamResponse(await expectOk(c.var.client.retry(body?.message)));
  });

  // The user's decisions and answers, or (under /operator/) an operator's: either is recorded with who decided.
  // /approvals is the older name of /decisions: both take every kind of decision.
  for (const path of ["/decisions", "/approvals", "/operator/decisions", "/operator/approvals"])
    app.post(path, async (c) => {
      const { decisions } = await readJson(c, ApprovalsBody);
      return decisionReply(c, await expectOk(c.var.client.decide(decisions)), "sse");
    });

  // 204 when there is nothing to send and nothing running: the SSE rule that stops EventSource reconnecting.
  app.get("/events", async (c) => {
    const query = readQuery(c, EventsQuery);
    const cursor = EventCursor.safeParse(c.req.header("last-event-id") ?? query.after ?? "0");
    if (!cursor.success)
      throw new HttpError("invalid_request", "Last-Event-ID (or ?after=) must be an event id in decimal digits, such as 42.");
    const outcome = await expectOk(c.var.client.events(cursor.data, query.follow === "true"));
    return outcome.kind === "stream" ? streamResponse(outcome) : c.body(null, 204);
  });

  // Answers once the turn has ended: a message sent right after is accepted.
  app.post("/cancel", async (c) => c.json(await expectOk(c.var.client.cancel())));

  app.delete("/", async (c) => {
    await expectOk(c.var.client.erase());
    return c.body(null, 204);
  });

  registerFileRoutes(app);
  registerViewRoutes(app);
  registerTurnRoutes(app);
  registerScheduleRoutes(app);
  registerSocket(app);
  registerOperatorActions(app);
  registerTokenIssue(app);
  registerFork(app);
  registerUIChatRoutes(app);
  return app;
}

/** Why the conversation went where it went: each turn, a turn's trace, and what the agents asked as tools did in it. */
function registerTurnRoutes(app: Hono<ConversationEnv>): void {
  const turnOf = (param: string | undefined): number => {
    const turn = TurnNumber.safeParse(param);
    if (!turn.success) throw new HttpError("invalid_request", describeProblems(turn.error));
    return turn.data;
  };
  app.get("/turns", async (c) => c.json(await expectOk(c.var.client.turns())));
  app.get("/turns/:turn/trace", async (c) => c.json(await expectOk(c.var.client.turnTrace(turnOf(c.req.param("turn"))))));
  // Their own histories, apart from the conversation's.
  app.get("/turns/:turn/delegations", async (c) => c.json(await expectOk(c.var.client.turnDelegations(turnOf(c.req.param("turn"))))));
}

/** The conversation itself: its view, and its title or archived flag. */
function registerViewRoutes(app: Hono<ConversationEnv>): void {
  // The newest page of the history by default; `page.previous` is the cursor for the one before.
  app.get("/", async (c) => {
    const view = await c.var.client.getView(readQuery(c, PageParams));
    const access = c.get("access");
    // A conversation its owner's inbox still lists but that is gone (its removal was missed): it leaves the inbox now.
    if (!view.ok && view.error.code === "conversation_not_found" && access.kind === "user")
      await (await inboxOf(c.env, access.user.id))?.remove(c.var.conversationId);
    return c.json(await expectOk(Promise.resolve(view)));
  });

  app.patch("/", async (c) => c.json(await expectOk(c.var.client.update(await readJson(c, ConversationPatch)))));
}

/**
 * GET …/socket: a WebSocket the conversation's Durable Object accepts through the hibernation API,
 * carrying every event of every turn (`?after=<id>` resumes; `?token=` where a browser cannot send
 * Authorization). The Worker authenticates it and names the requester to the object.
 */
function registerSocket(app: Hono<ConversationEnv>): void {
  app.get("/socket", async (c) => {
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
      throw new HttpError("upgrade_required", "GET …/socket upgrades to a WebSocket: send Upgrade: websocket (new WebSocket(url) does).");
    const after = EventCursor.safeParse(c.req.query("after") ?? "0");
    if (!after.success) throw new HttpError("invalid_request", "?after= must be an event id in decimal digits, such as 42.");
    const requester = requesterOf(c.var.conversationId, c.get("access"), originOf(c.req));
    const res = await conversationObject(c.env, c.var.conversationId).fetch(
      new Request(`https://conversation/socket?after=${after.data}`, {
        headers: { upgrade: "websocket", [SOCKET_REQUESTER_HEADER]: JSON.stringify(requester) },
      }),
    );
    if (res.status === 101) return res;
    return expectOk(res.json() as Promise<ConversationResult<never>>);
  });
}

/** What is scheduled (follow-ups, deadlines), and cancelling: one entry, or every follow-up. */
function registerScheduleRoutes(app: Hono<ConversationEnv>): void {
  app.get("/schedule", async (c) => c.json(await expectOk(c.var.client.scheduleEntries())));
  app.delete("/schedule", async (c) => c.json(await expectOk(c.var.client.cancelScheduled())));
  app.delete("/schedule/:entry", async (c) => c.json(await expectOk(c.var.client.cancelScheduled(c.req.param("entry")))));
}

/** A person holding the conversation answers the user, and hands it back to an agent (operator access only). */
function registerOperatorActions(app: Hono<ConversationEnv>): void {
  app.post("/operator/messages", async (c) => {
    const { message, operator } = await readJson(c, OperatorMessageBody);
    const person = signedInOperator(c.get("access"));
    // A signed-in operator is who their token says: the name shown is theirs, never a field the client chooses.
    if (person && operator !== undefined)
      throw new HttpError("invalid_request", "`operator` is taken from your sign-in token: leave it out.");
    return c.json(await expectOk(c.var.client.operatorMessage(message, person ? (person.name ?? person.id) : operator, person)));
  });
  app.post("/operator/handoff", async (c) => {
    const { to, note } = await readJson(c, OperatorHandoffBody);
    return c.json(await expectOk(c.var.client.operatorHandBack(to, note ?? "", signedInOperator(c.get("access")))));
  });
}

function signedInOperator(access: ConversationEnv["Variables"]["access"]): { id: string; name?: string } | undefined {
  return access.kind === "operator" ? access.person : undefined;
}
