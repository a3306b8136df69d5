/** What the agent a handoff brought sees: the history through that handoff's filter. */
import type { Agent } from "../agent.ts";
import type { Message } from "../messages.ts";
import type { Network } from "../network.ts";
import type { HandoffRecord } from "./types.ts";

/**
 * The filter of the handoff that brought the agent now holding the conversation, if it has one.
 * None once that agent has handed on, or when the edge is gone from the network (a deploy removed it).
 */
export function arrivalFilter(
  network: Network,
  holder: Agent,
  arrival: HandoffRecord | undefined,
): ((messages: readonly Message[]) => Message[]) | undefined {
  // A return is no transfer edge: the caller sees its history whole again.
  if (!arrival || arrival.kind === "return" || arrival.to !== holder.name || !network.get(arrival.from)) return undefined;
  return network.edges(arrival.from).find((e) => e.agent.name === arrival.to)?.historyFilter;
}

/**
 * A history filter that keeps the words and drops the files (`handoff(agent, { historyFilter: withoutFiles })`): the
 * target reads that a file was sent, by name and type, and is sent no bytes.
 */
export function withoutFiles(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    if (message.role !== "user" || !message.files?.length) return message;
    const { files, ...rest } = message;
    const named = files.map((file) => `[File "${file.name}", ${file.mediaType}, not shown]`).join("\n");
    return { ...rest, content: rest.content ? `${rest.content}\n${named}` : named };
  });
}
