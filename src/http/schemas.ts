/**
 * The request bodies and parameters of the HTTP API. What a turn reads (a conversation's id, a
 * message) is built when the isolate starts, as a cold start's first turn needs it; every other
 * route's schema the first time a request needs it (`z.lazy`), so an isolate's start does not pay for
 * routes a Worker may never be asked for (issue 67).
 */
import * as z from "zod";
import { DecisionSchema } from "../runtime/wait/requests.ts";
import { HttpError } from "./errors.ts";

export const CONVERSATION_ID_RULE = "Conversation ids are 1-128 characters of A-Z, a-z, 0-9, _ and -.";

/** Conversation ids: 1-128 characters of [A-Za-z0-9_-]. */
export const ConversationId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, CONVERSATION_ID_RULE);

/** A conversation id from a path, or the 400 that says what one looks like: the one check of every route that names one. */
export function conversationIdOf(raw: string | undefined): string {
  if (raw === undefined || !ConversationId.safeParse(raw).success) throw new HttpError("invalid_conversation_id", CONVERSATION_ID_RULE);
  return raw;
}

/** A file a message carries: its bytes as a data URL (with a name), or an uploaded file's id. */
export const FileInput = z.union([
  z.strictObject({
    url: z.string().startsWith("data:", "`url` must be a data URL (data:<type>;base64,…); upload other files to …/files first."),
    mediaType: z.string().optional(),
    name: z.string().max(1000).optional(),
  }),
  z.strictObject({ fileId: z.string().min(1).max(100) }),
]);
export type FileInput = z.infer<typeof FileInput>;

export const MessageBody = z
  .strictObject({
    message: z.string({ error: "`message` must be a string." }),
    /** Files the message carries: data URLs, or ids of files uploaded to …/files. */
    files: z.array(FileInput).max(100, "At most 100 files.").optional(),
  })
  .refine((body) => body.message.trim().length > 0 || (body.files?.length ?? 0) > 0, {
    message: "`message` must not be empty (unless the message carries files).",
    path: ["message"],
  });
export type MessageBody = z.infer<typeof MessageBody>;

/** ?limit=&before= on the history: a page of at most `limit` messages before the index `before`. */
export const PageParams = z.lazy(() =>
  z.strictObject({
    limit: z.coerce
      .number()
      .int()
      .min(1, "`limit` is at least 1.")
      .max(1000, "`limit` is at most 1000.")
      .optional()
      .describe("At most this many messages (1 to 1000; 100 by default)."),
    before: z.coerce
      .number()
      .int()
      .min(0, "`before` is a message index, 0 or more.")
      .optional()
      .describe("Messages before this index: the `previous` cursor of a page."),
  }),
);

/** A turn number in a path: 1 or more. */
export const TurnNumber = z.lazy(() =>
  z.coerce.number({ error: "The turn must be a number, such as 3." }).int().min(1, "Turns are numbered from 1."),
);

/** POST …/fork: the turn after which the new conversation starts. */
export const ForkBody = z.lazy(() =>
  z.strictObject({
    afterTurn: z.number({ error: "`afterTurn` must be a turn number, such as 3." }).int().min(1, "`afterTurn` starts at 1."),
  }),
);

/** POST …/retry: an optional `message` replaces the text of the turn run again (an edit). */
export const RetryBody = z.lazy(() =>
  z
    .strictObject({
      message: z.string({ error: "`message` must be a string." }).refine((text) => text.trim().length > 0, "`message` must not be empty."),
    })
    .partial(),
);

/** POST …/operator/messages: what the person says to the user, and who they are (shown to the user). */
const operatorText = (field: string) =>
  z
    .string({ error: `\`${field}\` must be a string.` })
    .max(8000, `\`${field}\` is at most 8000 characters.`)
    .refine((text) => text.trim().length > 0, `\`${field}\` must not be empty.`);

/**
 * `message`, as every body that carries a message's text names it; `text` is its deprecated alias
 * (this release only). One of the two, not both.
 */
export const OperatorMessageBody = z.lazy(() =>
  z
    .strictObject({
      message: operatorText("message").optional(),
      text: operatorText("text").optional(),
      operator: z.string().max(100, "`operator` is at most 100 characters.").optional(),
    })
    .refine((body) => (body.message === undefined) !== (body.text === undefined), "Send the person's answer as `message` (one field).")
    .transform(({ message, text, operator }) => ({ message: (message ?? text)!, ...(operator === undefined ? {} : { operator }) })),
);

/** POST …/operator/handoff: the agent that takes the conversation back, and a note it reads. */
export const OperatorHandoffBody = z.lazy(() =>
  z.strictObject({
    to: z.string({ error: "`to` must name an agent, such as triage." }).min(1, "`to` must name an agent, such as triage."),
    note: z.string().max(2000, "`note` is at most 2000 characters.").optional(),
  }),
);

/** GET /v1/operator/conversations?status=: the desk's list, or one status of it. */
export const DeskQuery = z.lazy(() =>
  z.strictObject({
    status: z
      .enum(["waiting", "held", "asking"], { error: "`status` is waiting, held or asking." })
      .optional()
      .describe("Only the conversations waiting for a person, those one holds, or those whose turn waits for their user."),
  }),
);

/** GET …/events?follow=true: stay open for a person's messages while a person holds the conversation. */
export const EventsQuery = z.lazy(() =>
  z.strictObject({
    after: z
      .string()
      .optional()
      .describe("Events after this id (as Last-Event-ID, which wins when both are sent); 0 for every event of the turn."),
    follow: z
      .enum(["true", "false"], { error: "`follow` is true or false." })
      .optional()
      .describe("true: while a person holds the conversation, stay open for their messages."),
  }),
);

export const ApprovalsBody = z.lazy(() =>
  z.strictObject({
    decisions: z
      .array(DecisionSchema)
      .min(1, "Give at least one decision.")
      .refine((decisions) => new Set(decisions.map((d) => d.toolCallId)).size === decisions.length, "Each toolCallId may be decided once."),
  }),
);
export type ApprovalsBody = z.infer<typeof ApprovalsBody>;

/** A resume position: the SSE `Last-Event-ID` header or `?after=`, in plain decimal digits only. */
export const EventCursor = z.lazy(() =>
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
);

/** POST /v1/conversations/:id/tokens: `rotate` revokes every token issued before. */
export const TokenBody = z.lazy(() => z.strictObject({ rotate: z.boolean().optional() }));

/**
 * GET /v1/conversations: a signed-in user's list, newest first, `before` the previous page's `next`; `q` searches titles
 * and every user and agent message.
 */
export const InboxQueryParams = z.lazy(() =>
  z.strictObject({
    limit: z.coerce
      .number({ error: "`limit` is a number of conversations, 1 to 100." })
      .int()
      .min(1)
      .max(100)
      .default(20)
      .describe("At most this many conversations (1 to 100; 20 by default)."),
    before: z
      .string()
      .regex(/^\d{1,16}(\.[A-Za-z0-9_-]{1,128})?$/, "`before` is the `next` cursor of the page before, such as 1764590000000.3f2a-….")
      .optional()
      .describe("The `next` cursor of the page before."),
    q: z.string().max(200, "`q` is at most 200 characters.").optional().describe("Words to search for, each a prefix."),
    archived: z
      .enum(["true", "false"], { error: "`archived` is true or false." })
      .optional()
      .describe("true: the archived conversations instead."),
  }),
);

/** PATCH /v1/conversations/:id: a new title, or archiving (or not). */
export const ConversationPatch = z.lazy(() =>
  z
    .strictObject({
      title: z
        .string({ error: "`title` must be a string." })
        .trim()
        .min(1, "`title` must not be empty.")
        .max(120, "`title` is at most 120 characters.")
        .optional(),
      archived: z.boolean({ error: "`archived` is true or false." }).optional(),
    })
    .refine((patch) => patch.title !== undefined || patch.archived !== undefined, "Send a `title`, `archived`, or both."),
);

/** POST /v1/conversations takes no fields today; unknown ones are refused so typos surface. */
export const CreateConversationBody = z.lazy(() => z.strictObject({}));

/**
 * The body `useChat` sends through `DefaultChatTransport`. Loose on purpose: AI SDK versions add
 * fields, and only the newest message is read (the Durable Object holds the history).
 */
export const UIChatBody = z.lazy(() =>
  z.looseObject({
    id: z.string().optional(),
    trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
    /** Set by useChat when a message is replaced: an edit of the newest user message. */
    messageId: z.string().optional(),
    messages: z
      .array(
        z.looseObject({
          id: z.string().optional(),
          role: z.enum(["system", "user", "assistant"]),
          parts: z.array(
            z.looseObject({
              type: z.string(),
              text: z.string().optional(),
              state: z.string().optional(),
              approval: z.looseObject({ id: z.string(), approved: z.boolean().optional(), reason: z.string().optional() }).optional(),
              toolCallId: z.string().optional(),
              output: z.unknown().optional(),
              errorText: z.string().optional(),
            }),
          ),
        }),
      )
      .min(1, "Send at least one message."),
  }),
);
export type UIChatBody = z.infer<typeof UIChatBody>;

/** POST /v1/dev/sign-in: the name to sign in as, and whether as an operator. */
export const DevSignInBody = z.lazy(() =>
  z.strictObject({
    name: z
      .string({ error: "`name` must be a string, the name you sign in as." })
      .trim()
      .min(1, "`name` must not be empty.")
      .max(40, "`name` is at most 40 characters."),
    operator: z.boolean({ error: "`operator` must be true or false." }).optional(),
  }),
);
