import { z } from "zod";

/** Conversation ids: 1-128 characters of [A-Za-z0-9_-]. */
export const ConversationId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "Conversation ids are 1-128 characters of A-Z, a-z, 0-9, _ and -.");

export const MessageBody = z.strictObject({
  message: z
    .string({ error: "`message` must be a string." })
    .refine((text) => text.trim().length > 0, "`message` must not be empty."),
});
export type MessageBody = z.infer<typeof MessageBody>;
