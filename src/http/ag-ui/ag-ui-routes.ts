/**
 * AG-UI 1.0 (the Agent–User Interaction protocol): `POST /v1/ag-ui` takes the protocol's
 * `RunAgentInput` and answers with its events over SSE, so a frontend built on `@ag-ui/client`
 * (`HttpAgent`) talks to the network. The thread is the conversation (a new id creates it, owned by
 * the requester); the newest user message is the turn's message; `resume` entries decide the calls
 * a run's interrupts named, and stream the resumed turn. What is refused is refused before any
 * event, as an HTTP error in this API's shape, and changes nothing stored.
 */
import type { Hono } from "hono";
import * as z from "zod";
import type { Env } from "../../env.ts";
import type { Network } from "../../runtime/network.ts";
import { type Decision, kindOf, REQUEST_CANCELLED, type UserRequest } from "../../runtime/wait/requests.ts";
import { AgUiEncoder, lastSeenEvent } from "../../wire/ag-ui-stream.ts";
import { encodeTurn, SSE_HEADERS } from "../../wire/index.ts";
import type { AppEnv } from "../app-env.ts";
import { conversationClient, originOf } from "../conversation-client.ts";
import { HttpError } from "../errors.ts";
import { expectOk, readJson } from "../request.ts";
import { ConversationId } from "../schemas.ts";
import { agUiFiles } from "./ag-ui-files.ts";
import { messageFiles } from "../file-inputs.ts";
import type { Protocol } from "../protocols.ts";
import { AG_UI_OFFER, AG_UI_PATH } from "./offer.ts";
import { ERROR_RESPONSE } from "../openapi.ts";

const TextPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** A message of the client's thread: only the newest user message is read; the rest is the client's copy of the history. */
const AgUiMessage = z.looseObject({
  id: z.string(),
  role: z.string(),
  content: z.union([z.string(), z.array(TextPart)]).optional(),
  /** A tool message's call: the application's answer to a frontend tool (a client tool) the last run left open. */
  toolCallId: z.string().optional(),
});

const ResumeEntry = z.strictObject({
  interruptId: z.string().min(1),
  status: z.enum(["resolved", "cancelled"]),
  payload: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** The protocol's `RunAgentInput`, as this endpoint reads it (unknown fields are the client's own and are let be). */
export const RunAgentInputBody = z.looseObject({
  threadId: ConversationId,
  runId: z.string().min(1, "`runId` names the run."),
  messages: z.array(AgUiMessage),
  tools: z.array(z.unknown()).optional(),
  context: z.array(z.unknown()).optional(),
  state: z.unknown().optional(),
  forwardedProps: z.unknown().optional(),
  resume: z.array(ResumeEntry).optional(),
});
type RunAgentInputBody = z.infer<typeof RunAgentInputBody>;

/** `forwardedProps` of a run that follows a person holding the thread: it starts no turn, and waits for the person's next message. */
const FollowProps = z.looseObject({ follow: z.literal(true) });

/** An approval interrupt's answer: its `responseSchema`. */
const ApprovalPayload = z.strictObject({ approved: z.boolean(), reason: z.string().max(2000).optional() });

/** AG-UI for `@ag-ui/client` and CopilotKit (docs/chat-clients.md): `createHandoffWorker({ protocols: [agUi()] })`. */
export function agUi(): Protocol {
  // A run's messages may carry files inline.
  return { ...AG_UI_OFFER, carriesFiles: true, openApi: agUiOperations, register: registerAgUi };
}

/** AG-UI's part of the OpenAPI document: its one endpoint, answered with the protocol's events. */
function agUiOperations(): Record<string, unknown> {
  const error = ERROR_RESPONSE;
  return {
    "/v1/ag-ui": {
      post: {
        summary:
          "AG-UI 1.0: a RunAgentInput (threadId: the conversation, created on first use; the newest user message; resume entries answer interrupts) answered with the protocol's events over SSE (docs/chat-clients.md)",
        requestBody: {
          required: true,
          content: { "application/json": { schema: { type: "object", required: ["threadId", "runId", "messages"] } } },
        },
        responses: {
          "200": {
            description: "AG-UI events: RUN_STARTED … RUN_FINISHED (outcome success, cancelled or interrupt) or RUN_ERROR",
            content: { "text/event-stream": {} },
          },
          "400": error,
          "401": error,
          "404": error,
          "409": error,
          "429": error,
        },
      },
    },
  };
}

function registerAgUi(app: Hono<AppEnv>, networkFor: (env: Env) => Network): void {
  app.post(AG_UI_PATH, async (c) => {
    const input = await readJson(c, RunAgentInputBody);
    const network = networkFor(c.env);
    const run = { threadId: input.threadId, runId: input.runId, isPerson: (name: string) => Boolean(network.get(name)?.human) };
    const encoder = new AgUiEncoder(run);
    const client = conversationClient(c.env, input.threadId, c.get("access"), originOf(c.req));
    const replies = toolReplies(input);
    const waiting = input.resume?.length || replies.length ? (await expectOk(client.getView())).pendingRequests : [];
    // The client's copy of the thread holds every tool result; only those that answer a client tool left open are answers.
    const answers = replies.filter((r) =>
      waiting.some((p) => p.toolCallId === r.toolCallId && kindOf(p).answeredWith(p) === "tool-output"),
    );
    if (input.resume?.length || answers.length) {
      const outcome = await expectOk(client.decide([...resumeDecisions(input.resume ?? [], waiting), ...answers]));
      if (outcome.kind === "stream") return agUiResponse(encodeTurn(outcome.events, encoder));
      // Decisions that leave requests waiting start nothing: the run ends on those still open.
      const open = waiting.filter((p) => outcome.pending.includes(p.toolCallId));
      return agUiResponse(new Response(encoder.interrupted(open)).body!);
    }
    if (FollowProps.safeParse(input.forwardedProps).success) {
      // The person's next message, or their hand back, as it comes (or at once, when it came since the thread last looked).
      const follow = new AgUiEncoder({ ...run, follow: { after: lastSeenEvent(input.messages.map((m) => m.id)) } });
      const outcome = await expectOk(client.events(0, true));
      return agUiResponse(outcome.kind === "stream" ? encodeTurn(outcome.events, follow) : finishedAtOnce(follow));
    }
    const files = agUiFiles(input.messages.findLast((m) => m.role === "user")?.content);
    const text = userText(input, files.length > 0);
    const turn = await expectOk(client.sendMessage(text, { createOwned: true, ...messageFiles(files) }));
    return agUiResponse(encodeTurn(turn.events, encoder));
  });
}

function agUiResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { headers: SSE_HEADERS });
}

/** A follow with nothing to follow: the run starts and finishes at once. */
function finishedAtOnce(encoder: AgUiEncoder): ReadableStream<Uint8Array> {
  return new Response(encoder.end()).body!;
}

/**
 * The turn's message: the newest user message's text (a string, or its text parts joined), which a run that starts a turn
 * must have, unless it carries files.
 */
function userText(input: RunAgentInputBody, hasFiles: boolean): string {
  const content = input.messages.findLast((m) => m.role === "user")?.content;
  const text =
    typeof content === "string" ? content : (content ?? []).flatMap((p) => (p.type === "text" && p.text ? [p.text] : [])).join("\n");
  if (!text.trim() && !hasFiles)
    throw new HttpError(
      "invalid_request",
      "The run has no user message with text: add one to `messages` (role `user`), or send `resume` entries to answer the open interrupts.",
    );
  return text;
}

/**
 * Resume entries as decisions, by how the kind of request each answers is answered: `cancelled` declines any; `resolved`
 * carries a yes or no's `{ approved, reason? }` (an approval's, a URL elicitation's), or the answer (a question's, a
 * choice's, an elicitation form's content).
 */
function resumeDecisions(entries: NonNullable<RunAgentInputBody["resume"]>, waiting: readonly UserRequest[]): Decision[] {
  return entries.map(({ interruptId, status, payload }) => {
    if (status === "cancelled") return { toolCallId: interruptId, approved: false, reason: REQUEST_CANCELLED };
    const request = waiting.find((p) => p.toolCallId === interruptId);
    const yesOrNo = !request || kindOf(request).answeredWith(request) === "yes-no";
    if (!yesOrNo) return { toolCallId: interruptId, answer: payload };
    const answer = ApprovalPayload.safeParse(payload);
    if (!answer.success)
      throw new HttpError(
        "invalid_request",
        `The resume entry for '${interruptId}' needs a payload of { approved: boolean, reason?: string }: ${z.prettifyError(answer.error)}`,
      );
    return { toolCallId: interruptId, ...answer.data };
  });
}

/**
 * The tool messages after the newest user message, as answers: among them, the application's answers to the frontend
 * tools the last run left open. A tool message's content is its output, read as JSON when it is JSON.
 */
function toolReplies(input: RunAgentInputBody): Decision[] {
  const lastUser = input.messages.findLastIndex((m) => m.role === "user");
  return input.messages.slice(lastUser + 1).flatMap((m) => {
    if (m.role !== "tool" || !m.toolCallId) return [];
    const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");
    return [{ toolCallId: m.toolCallId, answer: jsonOrText(text) }];
  });
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
