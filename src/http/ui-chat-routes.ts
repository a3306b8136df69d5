import type { Hono } from "hono";
import { readConfig } from "../config.ts";
import type { ApprovalDecision } from "../runtime/index.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse } from "./errors.ts";
import { conversationId, limitClient, readJson, sessionError, streamResponse } from "./request.ts";
import { UIChatBody } from "./schemas.ts";
import { sessionClient } from "./session-client.ts";

/** The AI SDK's chat protocol over a conversation: what `useChat` with `DefaultChatTransport` speaks. */
export function registerUIChatRoutes(app: Hono<AppEnv>): void {
  app.post("/v1/conversations/:id/chat", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const body = await readJson(c, UIChatBody);
    if (body instanceof Response) return body;
    if (body.trigger === "regenerate-message") {
      return errorResponse(c, "invalid_request", "Regenerating is not supported: the conversation's history lives on the server; send a new message instead.");
    }
    const client = sessionClient(c.env, id, c.get("access"));
    const last = body.messages.at(-1)!;
    if (last.role === "assistant") {
      const decisions = approvalResponses(last.parts);
      if (decisions.length === 0) return errorResponse(c, "invalid_request", "The last message is the assistant's and carries no approval responses.");
      const result = await client.decide(decisions, "ui");
      if (!result.ok) return sessionError(c, result.error);
      return result.value.kind === "stream" ? streamResponse(result.value.stream, "ui") : c.json({ status: "awaiting_approval", pending: result.value.pending }, 202);
    }
    const text = [...body.messages].reverse().find((m) => m.role === "user")?.parts.flatMap((p) => (p.type === "text" && p.text ? [p.text] : [])).join("\n") ?? "";
    if (!text.trim()) return errorResponse(c, "invalid_request", "The newest user message has no text.");
    const max = readConfig(c.env).MAX_MESSAGE_CHARS;
    if (text.length > max) return errorResponse(c, "message_too_long", `The message is ${text.length} characters; the limit is ${max}.`);
    const limited = await limitClient(c);
    if (limited) return limited;
    const result = await client.sendMessage(text, "ui");
    return result.ok ? streamResponse(result.value, "ui") : sessionError(c, result.error);
  });

  // The resume route: 204 when nothing runs, else the running turn from its start.
  app.get("/v1/conversations/:id/chat/stream", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const client = sessionClient(c.env, id, c.get("access"));
    const view = await client.view();
    if (!view.ok && view.error.code === "token_revoked") return sessionError(c, view.error);
    if (!view.ok || view.value.status !== "running") return c.body(null, 204);
    const events = await client.events(0, "ui");
    if (!events.ok) return sessionError(c, events.error);
    return events.value.kind === "stream" ? streamResponse(events.value.stream, "ui") : c.body(null, 204);
  });
}

function approvalResponses(parts: UIChatBody["messages"][number]["parts"]): ApprovalDecision[] {
  return parts.flatMap((part) =>
    part.state === "approval-responded" && part.approval?.approved !== undefined
      ? [{ toolCallId: part.approval.id, approved: part.approval.approved, ...(part.approval.reason ? { reason: part.approval.reason } : {}) }]
      : [],
  );
}

