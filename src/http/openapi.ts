import * as z from "zod";
import { EVENT_SCHEMAS, FileRefSchema } from "../runtime/events.ts";
import { FILE_TYPES } from "../conversation/files/file-checks.ts";
import type { Protocol } from "./protocols.ts";
import { MemoryChangeBody, MemoryQueryParams } from "./memory-routes.ts";
import {
  DevSignInBody,
  ApprovalsBody,
  CONVERSATION_ID_RULE,
  ConversationId,
  ConversationPatch,
  CreateConversationBody,
  DeskQuery,
  EventCursor,
  EventsQuery,
  ForkBody,
  InboxQueryParams,
  FileInput,
  MessageBody,
  OperatorHandoffBody,
  OperatorMessageBody,
  PageParams,
  RetryBody,
  TokenBody,
  TurnNumber,
  UIChatBody,
} from "./schemas.ts";

// An answer is any JSON (`unrepresentable: "any"`): its request's own schema says what fits.
const json = (schema: z.ZodType) => ({ "application/json": { schema: z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) } });
/** An error answer in the API's shape (`{ error: { code, message } }`), for every operation's error statuses. */
export const ERROR_RESPONSE = {
  description: "An error",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
};
const error = ERROR_RESPONSE;

/** A field's JSON Schema, as a parameter carries it (its description is the parameter's). */
function fieldSchema(schema: z.ZodType) {
  const { $schema: _, description: __, ...typed } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return typed;
}
/** The conversation id in a path: built with the first document (on request, never at an isolate's start), then kept. */
let idParamBuilt: Record<string, unknown> | undefined;
const idParam = () =>
  (idParamBuilt ??= { name: "id", in: "path", required: true, description: CONVERSATION_ID_RULE, schema: fieldSchema(ConversationId) });
/** An event id, as the routes that resume a stream check it. */
const cursor = () => fieldSchema(EventCursor);

/**
 * The query parameters a route reads with `schema`, each typed by its field (or by `checkedBy`,
 * the schema the route checks that field with after), its description the field's own.
 */
function queryParams(schema: z.ZodLazy<z.ZodObject>, checkedBy: Record<string, z.ZodType> = {}) {
  // The instance the route validates with (`unwrap()` would build another).
  return Object.entries(schema._zod.innerType.shape).map(([name, field]) => ({
    name,
    in: "query",
    ...(field.safeParse(undefined).success ? {} : { required: true }),
    ...(field.description ? { description: field.description } : {}),
    schema: fieldSchema(checkedBy[name] ?? field),
  }));
}

const streamed = (description: string) => ({ description, content: { "text/event-stream": {} } });

/** An event type's component name: `run-start` → `RunStartEvent`. */
export function eventComponent(type: string): string {
  return `${type.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase())}Event`;
}

/** Each event's JSON Schema, from the zod schema the code's type follows from. */
function eventSchemas(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(EVENT_SCHEMAS).map(([type, schema]) => {
      const { $schema: _, ...typed } = z.toJSONSchema(schema);
      return [eventComponent(type), typed];
    }),
  );
}

/** A route that streams a turn's events as Server-Sent Events: each frame's `data` is one of `types`, `event:` its type, `id:` its id. */
function eventStream(description: string, types: readonly (keyof typeof EVENT_SCHEMAS)[]) {
  return {
    description: `${description}: Server-Sent Events, each frame's data one of ${types.join(", ")}; \`event:\` is its type, \`id:\` its id`,
    content: {
      "text/event-stream": { schema: { oneOf: types.map((type) => ({ $ref: `#/components/schemas/${eventComponent(type)}` })) } },
    },
  };
}
const TURN_EVENTS = (Object.keys(EVENT_SCHEMAS) as (keyof typeof EVENT_SCHEMAS)[]).filter((type) => type !== "operator-message");
/** What a request that runs a turn streams: the turn's events, ending with done or error. */
const stream = eventStream("The turn as it runs", TURN_EVENTS);

/** The OpenAPI document, generated from the same zod schemas that validate the requests, with the `protocols` served's parts. */
export function openApiDocument(protocols: ReadonlyArray<Pick<Protocol, "openApi">> = []) {
  const routes = { ...paths(), ...Object.assign({}, ...protocols.map((protocol) => protocol.openApi?.() ?? {})) };
  return {
    openapi: "3.1.0",
    info: {
      title: "handoff-runtime",
      version: "1.0.0",
      description: "Multi-agent chat with handoffs, one Durable Object per conversation.",
    },
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "The API key, or a conversation token for its own conversation." },
      },
      schemas: {
        ...eventSchemas(),
        FileRef: fieldSchema(FileRefSchema),
        FileInput: fieldSchema(FileInput),
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: {
                code: { type: "string" },
                alias: { type: "string", description: "The code's former name, for a renamed code (request_* were approval_*)" },
                message: { type: "string" },
                details: { type: "object" },
              },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }],
    paths: routes,
  };
}

/** One entry per route; the request bodies are the zod schemas the routes validate with. */
function paths(): Record<string, unknown> {
  return {
    "/v1/openapi.json": {
      get: { summary: "This document", responses: { "200": { description: "The OpenAPI 3.1 document of this API" } } },
    },
    "/v1/agents": {
      get: {
        summary: "The agent network",
        responses: {
          "200": {
            description:
              "Agents, their tools, their MCP servers (with the tools last listed, or 'not yet listed'), handoff targets, " +
              "and up to three examples of what a user asks each",
          },
        },
      },
    },
    ...inboxPaths(),
    "/v1/conversations/{id}": {
      parameters: [idParam()],
      get: {
        summary: "The stored conversation",
        parameters: queryParams(PageParams),
        responses: { "200": { description: "State, messages, handoffs, pending approvals" }, "404": error },
      },
      patch: {
        summary: "Rename or archive the conversation (its owner's inbox shows it)",
        requestBody: { required: true, content: json(ConversationPatch) },
        responses: { "200": { description: "The conversation's inbox entry" }, "400": error, "404": error },
      },
      delete: { summary: "Erase the conversation", responses: { "204": { description: "Erased" }, "404": error, "409": error } },
    },
    "/v1/conversations/{id}/tokens": {
      parameters: [idParam()],
      post: {
        summary: "Issue a token for an existing conversation (API key only); rotate revokes every earlier token",
        requestBody: { required: false, content: json(TokenBody) },
        responses: { "201": { description: "{ id, token }" }, "403": error, "404": error },
      },
    },
    ...turnPaths(),
    ...operatorPaths(),
    ...signInPaths(),
    ...waitingPaths(),
  };
}

/** A signed-in user's conversations: the list, and creating one. */
function inboxPaths(): Record<string, unknown> {
  return {
    "/v1/conversations": {
      get: {
        summary:
          "A signed-in user's conversations, newest first (paged with before=next; q searches titles and every user and agent message, each word a prefix)",
        parameters: queryParams(InboxQueryParams),
        responses: {
          "200": { description: "{ conversations: [{ id, title, createdAt, updatedAt, holder, status, snippet, archived }], next }" },
          "400": error,
        },
      },
      post: {
        summary: "Create a conversation (a signed-in user's own); returns its id and a token for it",
        requestBody: { required: false, content: json(CreateConversationBody) },
        responses: { "201": { description: "Created" }, "403": error },
      },
    },
  };
}

/** The socket, and the schedule of a conversation that waits. */
function waitingPaths(): Record<string, unknown> {
  return {
    "/v1/conversations/{id}/socket": {
      parameters: [
        idParam(),
        { name: "after", in: "query", description: "Send the events after this id first.", schema: cursor() },
        {
          name: "token",
          in: "query",
          description: "The credential, for a browser's WebSocket, which cannot send Authorization.",
          schema: { type: "string" },
        },
      ],
      get: {
        summary:
          'Upgrade to a WebSocket that carries every event of every turn as {"id","type","data"} frames; send {"type":"message","message"} or {"type":"decision","decisions"}',
        responses: { "101": { description: "Switching protocols" }, "404": error, "409": error, "426": error },
      },
    },
    "/v1/conversations/{id}/schedule": {
      parameters: [idParam()],
      get: {
        summary:
          "What is scheduled, the earliest first: follow-ups (note, agent), the approvals' deadline, a person's deadline, " +
          "background delegations (agent, request, askedBy)",
        responses: { "200": { description: "{ entries: [{ id, kind, dueAt, turn, … }] }" }, "404": error },
      },
      delete: { summary: "Cancel every follow-up", responses: { "200": { description: "{ cancelled }" }, "404": error } },
    },
    "/v1/conversations/{id}/schedule/{entry}": {
      parameters: [
        idParam(),
        {
          name: "entry",
          in: "path",
          required: true,
          description: "A scheduled entry's id, as the schedule lists it.",
          schema: { type: "string" },
        },
      ],
      delete: { summary: "Cancel one scheduled entry", responses: { "200": { description: "{ cancelled: 1 }" }, "404": error } },
    },
  };
}

/** Who is signed in, their memory, and the development sign-in of `npm start`. */
function signInPaths(): Record<string, unknown> {
  return {
    "/v1/me": {
      get: {
        summary: "Who the request's credential is: { access, user (id, name, roles) or null, signIn: provider | development | null }",
        responses: { "200": { description: "Who is asking" }, "401": error },
      },
    },
    "/v1/me/memory": {
      get: {
        summary:
          "What the signed-in user's agents remember of them across conversations, newest first (q searches the words); " +
          "superseded memories are not listed",
        parameters: queryParams(MemoryQueryParams),
        responses: {
          "200": {
            description: "{ memories: [{ id, text, type, key?, source: { conversation, agent?, message? }, createdAt, replaced? }] }",
          },
          "400": error,
          "403": error,
          "503": error,
        },
      },
      delete: {
        summary: "Forget everything: the next turn recalls nothing",
        responses: { "200": { description: "{ forgotten }" }, "403": error, "503": error },
      },
    },
    "/v1/me/memory/{memoryId}": {
      parameters: [
        { name: "memoryId", in: "path", required: true, description: "A memory's id, as the list gives it.", schema: { type: "string" } },
      ],
      patch: {
        summary: "Correct a memory: its words, its type or both",
        requestBody: { required: true, content: json(MemoryChangeBody) },
        responses: { "200": { description: "{ memory }" }, "400": error, "403": error, "404": error, "413": error },
      },
      delete: {
        summary: "Forget one memory (and the older ones it superseded)",
        responses: { "200": { description: "{ forgotten }" }, "403": error, "404": error },
      },
    },
    "/v1/dev/sign-in": {
      post: {
        summary:
          "Development only (ALLOW_ANONYMOUS on the command line, no identity provider): a one-hour sign-in token for a name, an operator if asked",
        requestBody: { required: true, content: json(DevSignInBody) },
        responses: { "201": { description: "{ token, user, expiresAt }" }, "400": error, "404": error },
      },
    },
  };
}

/** The operator API: OPERATOR_KEY or the API key (never a conversation token). */
function operatorPaths(): Record<string, unknown> {
  return {
    "/v1/operator/conversations": {
      parameters: queryParams(DeskQuery),
      get: {
        summary: "Conversations handed to a person (waiting), held by one (held), or whose turn waits for its user (asking), oldest first",
        responses: {
          "200": { description: "{ conversations: [{ conversationId, status, person, since, updatedAt, preview }] }" },
          "401": error,
          "503": error,
        },
      },
    },
    "/v1/operator/conversations/{id}": {
      parameters: [idParam(), ...queryParams(PageParams)],
      get: {
        summary: "One conversation, as GET /v1/conversations/{id} shows it",
        responses: { "200": { description: "The conversation" }, "404": error },
      },
    },
    "/v1/operator/conversations/{id}/memory": {
      parameters: [idParam()],
      get: {
        summary: "What the customer's agents remember of them (read-only), while a person holds the conversation; none for a guest's",
        responses: { "200": { description: "{ memories: [{ id, text, type, key?, source, createdAt }] }" }, "404": error, "409": error },
      },
    },
    "/v1/conversations/{id}/operator/messages": {
      parameters: [idParam()],
      post: {
        summary: "The person holding the conversation answers the user (an operator-message event, streamed to followers)",
        requestBody: { required: true, content: json(OperatorMessageBody) },
        responses: { "200": { description: "{ eventId, agent }" }, "404": error, "409": error },
      },
    },
    "/v1/conversations/{id}/operator/handoff": {
      parameters: [idParam()],
      post: {
        summary: "The person hands the conversation back to an agent with a note the agent reads",
        requestBody: { required: true, content: json(OperatorHandoffBody) },
        responses: { "200": { description: "{ activeAgent }" }, "400": error, "404": error, "409": error },
      },
    },
    "/v1/conversations/{id}/operator/decisions": operatorDecisions("An operator decides approvals and answers questions that let one"),
    "/v1/conversations/{id}/operator/approvals": operatorDecisions("The older name of …/operator/decisions"),
  };
}

/** The routes that read past turns, or start a conversation from one. */
function pastTurnPaths(): Record<string, unknown> {
  return {
    "/v1/conversations/{id}/turns": {
      parameters: [idParam()],
      get: {
        summary: "Every turn: number, status, start, end, duration, usage, the agents it passed through and the handoffs it made",
        responses: { "200": { description: "Turn summaries, oldest first" }, "404": error },
      },
    },
    "/v1/conversations/{id}/turns/{turn}/trace": {
      parameters: [
        idParam(),
        { name: "turn", in: "path", required: true, description: "The turn's number, from 1.", schema: fieldSchema(TurnNumber) },
      ],
      get: {
        summary:
          "A turn's trace: spans for the turn, each agent's tenure, model calls, tool calls, approvals, handoffs (taken and refused), compactions, guardrails",
        responses: { "200": { description: "{ turn, spans }" }, "404": error },
      },
    },
    "/v1/conversations/{id}/turns/{turn}/delegations": {
      parameters: [
        idParam(),
        { name: "turn", in: "path", required: true, description: "The turn's number, from 1.", schema: fieldSchema(TurnNumber) },
      ],
      get: {
        summary: "A turn's delegated runs (agents asked as tools, in the background or not): each one's path of calls, agent and history",
        responses: { "200": { description: "{ delegations: [{ path, agent, messages }] }" }, "404": error },
      },
    },
    "/v1/conversations/{id}/fork": {
      parameters: [idParam()],
      post: {
        summary: "A new conversation (new id and token) whose history, holder, counters and context are this one's after `afterTurn`",
        requestBody: { required: true, content: json(ForkBody) },
        responses: { "201": { description: "{ id, token, activeAgent, forkedFrom }" }, "400": error, "404": error, "409": error },
      },
    },
  };
}

/** The routes that start, resume or stream a turn. */
function turnPaths(): Record<string, unknown> {
  return {
    ...pastTurnPaths(),
    "/v1/conversations/{id}/messages": {
      parameters: [idParam()],
      post: {
        summary: "Send a message; streams the turn",
        requestBody: { required: true, content: json(MessageBody) },
        responses: { "200": stream, "400": error, "409": error, "413": error, "415": error },
      },
    },
    "/v1/conversations/{id}/decisions": decisions(
      "Decide or answer what the turn waits for (approvals, questions, client tools, elicitations); streams the resumed turn",
    ),
    "/v1/conversations/{id}/approvals": decisions("The older name of …/decisions, which takes every kind of decision"),
    "/v1/conversations/{id}/retry": {
      parameters: [idParam()],
      post: {
        summary: "Rewind the last turn to where it started and run it again; `message` replaces its text (an edit). Streams the turn",
        requestBody: { required: false, content: json(RetryBody) },
        responses: { "200": stream, "404": error, "409": error, "429": error },
      },
    },
    "/v1/conversations/{id}/cancel": {
      parameters: [idParam()],
      post: {
        summary: "Cancel the running turn; answers once it has ended (its stream ends with done, status cancelled)",
        responses: { "200": { description: "{ cancelled: true }, or { cancelled: false } when nothing was running" }, "404": error },
      },
    },
    ...chatPaths(),
    ...filePaths(),
  };
}

const fileRef = { $ref: "#/components/schemas/FileRef" };
const fileIdParam = {
  name: "fileId",
  in: "path",
  required: true,
  description: "A file's id, as its reference gives it",
  schema: { type: "string" },
};
const fileRead = {
  description: "The file's bytes, with its media type and a Content-Disposition naming it (inline for images and text)",
  content: Object.fromEntries(FILE_TYPES.map((type) => [type, { schema: { type: "string", format: "binary" } }])),
};

/** A conversation's files: an upload, and a file read back (by whoever reads the conversation, or the desk while a person holds it). */
function filePaths(): Record<string, unknown> {
  return {
    "/v1/conversations/{id}/files": {
      parameters: [idParam(), { name: "name", in: "query", required: false, description: "The file's name", schema: { type: "string" } }],
      post: {
        summary: "Store a file for a message to carry by id (files: [{ fileId }]); an upload no message sends within the hour is swept",
        requestBody: {
          required: true,
          content: Object.fromEntries(FILE_TYPES.map((type) => [type, { schema: { type: "string", format: "binary" } }])),
        },
        responses: {
          "201": {
            description: "{ file }: its reference",
            content: { "application/json": { schema: { type: "object", properties: { file: fileRef } } } },
          },
          "400": error,
          "404": error,
          "413": error,
          "415": error,
          "503": error,
        },
      },
    },
    "/v1/conversations/{id}/files/{fileId}": {
      parameters: [idParam(), fileIdParam],
      get: { summary: "A file of the conversation", responses: { "200": fileRead, "404": error, "503": error } },
    },
    "/v1/operator/conversations/{id}/files/{fileId}": {
      parameters: [idParam(), fileIdParam],
      get: {
        summary: "A file of a conversation a person holds or is handed, for the desk",
        responses: { "200": fileRead, "401": error, "404": error },
      },
    },
  };
}

/** Reading turns: the AI SDK's chat protocol, the stored UI messages, and the event stream. */
function chatPaths(): Record<string, unknown> {
  return {
    "/v1/conversations/{id}/chat": {
      parameters: [idParam()],
      post: {
        summary: "The AI SDK UI message stream protocol (useChat with DefaultChatTransport); only the newest message is read",
        requestBody: { required: true, content: json(UIChatBody) },
        responses: {
          "200": streamed("UI message stream (x-vercel-ai-ui-message-stream: v1)"),
        },
      },
    },
    "/v1/conversations/{id}/ui-messages": {
      parameters: [idParam(), ...queryParams(PageParams)],
      get: {
        summary:
          "The stored conversation as the AI SDK's UIMessage[] (text, tool parts in their states, awaited approvals, data-handoff parts), for useChat({ messages })",
        responses: { "200": { description: "UIMessage[]" }, "404": error },
      },
    },
    "/v1/conversations/{id}/chat/stream": {
      parameters: [idParam()],
      get: {
        summary: "Resume the running turn as a UI message stream",
        responses: { "200": streamed("UI message stream"), "204": { description: "Nothing is running" } },
      },
    },
    "/v1/conversations/{id}/events": {
      parameters: [
        idParam(),
        ...queryParams(EventsQuery, { after: EventCursor }),
        {
          name: "Last-Event-ID",
          in: "header",
          description: "Events after this id: what EventSource sends when it reconnects.",
          schema: cursor(),
        },
      ],
      get: {
        summary:
          "The current or last turn's events after an id, then the live run; with follow=true while a person holds the conversation, their messages as they are sent",
        responses: {
          // A replay or a follow also carries a person's messages.
          "200": eventStream(
            "The events after the cursor, then the live run",
            Object.keys(EVENT_SCHEMAS) as (keyof typeof EVENT_SCHEMAS)[],
          ),
          "204": { description: "Nothing after the cursor and nothing running" },
          "404": error,
          "409": error,
          "429": error,
        },
      },
    },
  };
}

/** The one route every request to the user is answered through (and its older name). */
function decisions(summary: string): Record<string, unknown> {
  return {
    parameters: [idParam()],
    post: {
      summary,
      requestBody: { required: true, content: json(ApprovalsBody) },
      responses: {
        "200": stream,
        "202": {
          description:
            "Decisions recorded: requests still pending ({status: awaiting_approval, pending}), or a background delegation's " +
            "({status: background, background, pending}; it carries on from the alarm once none is pending)",
        },
        "400": error,
        "404": error,
        "409": error,
      },
    },
  };
}

/** An operator's decisions (recorded with who decided). */
function operatorDecisions(summary: string): Record<string, unknown> {
  const route = decisions(`${summary} (recorded with who); streams the resumed turn`);
  const post = route.post as { responses: Record<string, unknown> };
  return { ...route, post: { ...post, responses: { ...post.responses, "403": error } } };
}
