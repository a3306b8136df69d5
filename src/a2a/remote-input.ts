/**
 * What a remote agent is sent. Handed the conversation, it has seen nothing of it: by default it
 * gets the conversation so far as one message (who said what, and why it was handed over). Later,
 * it already holds the earlier messages in its own context: it gets what was said since its own
 * last answer, which is usually the user's one new message (as ADK sends the events since its last
 * reply), but also what other agents said while it did not hold the conversation.
 */
import type { Message } from "../runtime/messages.ts";
import type { RemoteInput } from "../runtime/ports/remote-port.ts";

/** The text of the message a remote agent is sent for this call. */
export function remoteInput(agent: string, messages: readonly Message[], input: RemoteInput | undefined, known: boolean): string {
  if (known) return sinceLastAnswer(agent, messages);
  if (typeof input === "function") return input(messages);
  if (input === "last-message") return lastUserText(messages);
  return render(messages);
}

function lastUserText(messages: readonly Message[]): string {
  return messages.findLast((m) => m.role === "user")?.content ?? "";
}

/** Everything after the agent's own last answer; the user's message alone when that is all there is. */
function sinceLastAnswer(agent: string, messages: readonly Message[]): string {
  const last = messages.findLastIndex((m) => m.role === "assistant" && m.agent === agent);
  const lines = messages.slice(last + 1).flatMap(line);
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
