/** The built-in tool an agent can be given to schedule a follow-up in its conversation. */
import * as z from "zod";
import { type Tool, tool } from "./tool.ts";

const FollowUpArgs = z.strictObject({
  inMinutes: z.number().positive().optional().describe("Minutes from now; give this or `at`."),
  at: z.iso.datetime({ offset: true }).optional().describe("When, as an ISO 8601 time; give this or `inMinutes`."),
  note: z.string().min(1).max(2000).describe("What to do when it is due, for whoever holds the conversation then."),
});

/**
 * `schedule_followup({ inMinutes | at, note })`: when due, whoever holds the conversation then
 * runs a turn with the note as a system message and answers the user. The host's bounds (how
 * many, how soon, how late) refuse the rest as error results the model can recover from.
 */
export function followUpTool(options: { name?: string; description?: string } = {}): Tool {
  return tool({
    name: options.name ?? "schedule_followup",
    description:
      options.description ??
      "Schedule a follow-up in this conversation, for example to check on something later: when it is due you get the note and answer the user then.",
    parameters: FollowUpArgs,
    execute: async (args, ctx) => {
      const scheduled = await ctx.schedule(args);
      return { scheduled: true, id: scheduled.id, at: scheduled.at };
    },
  });
}
