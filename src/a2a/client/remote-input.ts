/**
 * What a remote agent is sent. Handed the conversation, it has seen nothing of it: by default it
 * gets the conversation so far as one message (who said what, and why it was handed over). Later,
 * it already holds the earlier messages in its own context: it gets what it has not been given yet
 * (`sent` counts what it was), which is usually the user's one new message (ADK sends the events
 * since its last reply), but also what other agents said while it did not hold the conversation;
 * never a message a crash cut its call off on, which it was given already.
 */
import type { Message } from "../../runtime/messages.ts";
import type { RemoteInput, RemoteState } from "../../runtime/ports/remote-port.ts";

/** The text of the message a remote agent is sent for this call, from the whole history. */
export function remoteInput(agent: string, messages: readonly Message[], input: RemoteInput | undefined, state: RemoteState): string {
  if (state.contextId !== undefined) return notYetSent(agent, messages, state.sent);
  if (typeof input === "function") return input(messages);
  if (input === "last-message") return lastUserText(messages);
  return render(messages);
}

function lastUserText(messages: readonly Message[]): string {
  return messages.findLast((m) => m.role === "user")?.content ?? "";
}

/** What it was not given (after its own last answer when that is not known); the user's message alone when that is all there is. */
function notYetSent(agent: string, messages: readonly Message[], sent: number | undefined): string {
  const from = sent ?? messages.findLastIndex((m) => m.role === "assistant" && m.agent === agent) + 1;
  // Its own answers it has; the rest it was not given.
  const lines = messages
    .slice(from)
    .filter((m) => !(m.role === "assistant" && m.agent === agent))
    .flatMap(line);
  const only = lines.length === 1 ? lines[0]! : undefined;
  if (only?.startsWith("user: ")) return only.slice("user: ".length);
  return lines.join("\n") || lastUserText(messages);
}

function render(messages: readonly Message[]): string {
  return ["The conversation so far, which is handed to you:", ...messages.flatMap(line), "", `Answer the user's last message.`].join("\n");
}

/** One message as a line of the rendering; tool results and system notes stay out (they were for the agents that had them). */
function line(message: Message): string[] {
  if (message.role === "user") return [`user: ${message.content}`];
  if (message.role !== "assistant") return [];
  const said = message.content ? [`${message.agent}: ${message.content}`] : [];
  const handed = (message.toolCalls ?? [])
    .filter((call) => call.plan === "transfer" || call.plan === "person")
    .map((call) => `${message.agent} handed the conversation over${reasonOf(call.arguments)}.`);
  return [...said, ...handed];
}

function reasonOf(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    const reason = parsed && typeof parsed === "object" && "reason" in parsed ? parsed.reason : undefined;
    return typeof reason === "string" && reason.trim() ? `: ${reason.trim()}` : "";
  } catch {
    return "";
  }
}
