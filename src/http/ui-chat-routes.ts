import type { Hono } from "hono";
import { type ApprovalDecision, type Decision, kindOf, type UserRequest } from "../runtime/wait/requests.ts";
import type { ConversationEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { expectOk, readJson, readQuery, streamResponse } from "./request.ts";
import { type FileInput, PageParams, UIChatBody } from "./schemas.ts";
import { messageFiles } from "./file-inputs.ts";
import { decisionReply } from "./turn-replies.ts";
import { conversationFileUrl, toUIMessages } from "../wire/index.ts";

/** The AI SDK's chat protocol over a conversation: what `useChat` with `DefaultChatTransport` speaks. */
export function registerUIChatRoutes(app: Hono<ConversationEnv>): void {
  app.post("/chat", async (c) => {
    const body = await readJson(c, UIChatBody);
    const last = body.messages.at(-1)!;
    if (last.role === "assistant") {
      const waiting = (await expectOk(c.var.client.getView())).pendingRequests;
      const decisions = [...approvalResponses(last.parts), ...toolOutputs(last.parts, waiting)];
      if (decisions.length === 0)
        throw new HttpError(
          "invalid_request",
          "The last message is the assistant's and carries no approval responses or tool outputs for the requests that wait.",
        );
      return decisionReply(c, await expectOk(c.var.client.decide(decisions, { ignoreRepeats: true })), "ui");
    }
    const newest = body.messages.findLast((m) => m.role === "user");
    const text = newest?.parts.flatMap((p) => (p.type === "text" && p.text ? [p.text] : [])).join("\n") ?? "";
    const files = (newest?.parts ?? []).flatMap((part) => (part.type === "file" ? [fileInputOf(part, c.var.conversationId)] : []));
    if (!text.trim() && !files.length) throw new HttpError("invalid_request", "The newest user message has no text and no files.");
    // regenerate(), or an edit of the newest user message (sendMessage with its messageId): the server
    // rewinds the last turn and runs it again from this text, as the SDK has dropped what followed it.
    const edited = body.messageId !== undefined && last.role === "user" && last.id === body.messageId;
    const rerun = body.trigger === "regenerate-message" || edited;
    const started = rerun ? await expectOk(c.var.client.retry(text)) : await expectOk(c.var.client.sendMessage(text, messageFiles(files)));
    return streamResponse(started, "ui", c.var.conversationId);
  });

  // The stored conversation as UIMessage[], to seed useChat({ messages }) after a reload; paged like
  // the history, with the page in headers so the body stays what useChat takes.
  app.get("/ui-messages", async (c) => {
    const { history, page } = await expectOk(c.var.client.historyPage(readQuery(c, PageParams)));
    const messages = toUIMessages(history, page.start, conversationFileUrl(c.var.conversationId));
    c.header("x-page-start", String(page.start));
    c.header("x-page-total", String(page.total));
    if (page.previous !== null) c.header("x-page-previous", String(page.previous));
    return c.json(messages);
  });

  // The resume route: 204 when nothing runs, else the running turn from its start; while a person
  // holds the conversation, the person's messages as they are sent (data-operator-message parts).
  app.get("/chat/stream", async (c) => {
    const view = await c.var.client.getView();
    if (!view.ok && view.error.code === "token_revoked") throw new HttpError(view.error.code, view.error.message);
    if (view.ok && view.value.status === "awaiting_human") {
      const held = await expectOk(c.var.client.events(view.value.lastEventId, true));
      return held.kind === "stream" ? streamResponse(held, "ui", c.var.conversationId) : c.body(null, 204);
    }
    if (!view.ok || view.value.status !== "running") return c.body(null, 204);
    const events = await expectOk(c.var.client.events(0));
    return events.kind === "stream" ? streamResponse(events, "ui", c.var.conversationId) : c.body(null, 204);
  });
}

/**
 * A `FileUIPart` as the one file shape: a data URL as it is (the SDK makes one of a picked file), or this conversation's
 * own file route (a part of a history the page was seeded with) as the file's id.
 */
function fileInputOf(part: Record<string, unknown>, conversationId: string): FileInput {
  const url = typeof part.url === "string" ? part.url : "";
  const own = new RegExp(`/v1/conversations/${conversationId}/files/([^/?#]+)$`).exec(url)?.[1];
  if (own) return { fileId: decodeURIComponent(own) };
  if (!url.startsWith("data:"))
    throw new HttpError("invalid_file", "A file part's `url` must be a data URL, or this conversation's own file route.");
  return {
    url,
    ...(typeof part.mediaType === "string" ? { mediaType: part.mediaType } : {}),
    ...(typeof part.filename === "string" ? { name: part.filename } : {}),
  };
}

function approvalResponses(parts: UIChatBody["messages"][number]["parts"]): ApprovalDecision[] {
  return parts.flatMap((part) =>
    part.state === "approval-responded" && part.approval?.approved !== undefined
      ? [
          {
            toolCallId: part.approval.id,
            approved: part.approval.approved,
            ...(part.approval.reason ? { reason: part.approval.reason } : {}),
          },
        ]
      : [],
  );
}

/**
 * What the page answered with `addToolOutput` (a client tool's output, a question's or form's answer) or declined with an
 * `output-error`, for the requests that wait: the message's other tool parts are the turn's own results, sent back as they were.
 */
function toolOutputs(parts: UIChatBody["messages"][number]["parts"], waiting: readonly UserRequest[]): Decision[] {
  // Approvals are the SDK's own approval responses; every other kind is answered as a tool's output.
  const open = new Set(waiting.filter((r) => kindOf(r).waits !== "approval").map((r) => r.toolCallId));
  return parts.flatMap((part): Decision[] => {
    if (!part.toolCallId || !open.has(part.toolCallId)) return [];
    if (part.state === "output-available") return [{ toolCallId: part.toolCallId, answer: part.output }];
    if (part.state === "output-error")
      return [{ toolCallId: part.toolCallId, approved: false, ...(part.errorText ? { reason: part.errorText } : {}) }];
    return [];
  });
}
