/** The conversation history as the runtime stores it and sends it to models. */

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON text the model produced; parsed only when the call runs. */
  arguments: string;
  /** What the loop made of the call (stored calls carry it; absent on calls stored before it did, and on the model's own). */
  plan?: CallPlan;
  /** What the call does, in words for the user (its tool's `describe`), where its tool says. */
  said?: string;
}

/**
 * What a call was to the loop: a tool of the agent's (or an unknown one), a transfer to an agent
 * or to a person, a return to the caller, or a transfer or return the rules refused.
 */
export type CallPlan = "tool" | "transfer" | "person" | "return" | "refused-handoff";

/**
 * A file in a conversation, as the history keeps it: a reference to bytes stored elsewhere (the
 * host's file store), never the bytes. `sha256` is the bytes' hash in hex.
 */
export interface FileRef {
  id: string;
  mediaType: string;
  size: number;
  name: string;
  sha256: string;
}

/** A user's message in the history; `files` are what it carried (images, PDFs, text), by reference. */
export interface UserMessage {
  role: "user";
  content: string;
  files?: FileRef[];
}

/** An agent's answer in the history: its text and the tool calls it made. */
export interface AssistantMessage {
  role: "assistant";
  /** The agent that produced this message: the history records who held the conversation. */
  agent: string;
  content: string | null;
  toolCalls?: ToolCall[];
}

/** The answer to one tool call, in the history right after the call. */
export interface ToolMessage {
  role: "tool";
  toolCallId: string;
  name: string;
  content: string;
  isError: boolean;
  /**
   * A person's decision, when the call waited for one (an approved call ran; a declined one did not), and what they were
   * asked (the tool's `approvalMessage`), so a page that loads the history later shows the card as it was decided.
   */
  approval?: { approved: boolean; reason?: string; message?: string };
  /** Files the call saved (`ctx.files.save`): a label, a chart; shown to the user, by reference. */
  files?: FileRef[];
}

/** A system message in the history: the `append` system-prompt mode adds one at each handoff. */
export interface SystemMessage {
  role: "system";
  agent: string;
  content: string;
}

/** One message of the stored history, as the runtime keeps it and sends it to models. */
export type Message = UserMessage | AssistantMessage | ToolMessage | SystemMessage;

/** The files a history's messages carry: the user's, and those tools saved. */
export function filesOfHistory(history: readonly Message[]): FileRef[] {
  return history.flatMap((message) => (message.role === "user" || message.role === "tool" ? (message.files ?? []) : []));
}

/**
 * A history is valid for the model APIs when every assistant tool call is answered by
 * exactly one tool message, in call order, right after it, and no tool message is orphaned.
 * Returns the first problem found, or null.
 */
export function findHistoryProblem(messages: readonly Message[]): string | null {
  let open: string[] = [];
  for (const [i, message] of messages.entries()) {
    if (message.role === "tool") {
      if (open[0] !== message.toolCallId) {
        return `message ${i}: tool result ${message.toolCallId} does not answer the next open call (${open[0] ?? "none"})`;
      }
      open = open.slice(1);
      continue;
    }
    if (open.length > 0) return `message ${i}: calls left unanswered: ${open.join(", ")}`;
    if (message.role === "assistant") open = (message.toolCalls ?? []).map((call) => call.id);
  }
  return open.length > 0 ? `calls left unanswered at the end: ${open.join(", ")}` : null;
}
