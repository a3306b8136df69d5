/** What the agent a handoff brought sees: the history through that handoff's filter. */
import type { Agent } from "../agent.ts";
import type { FileRef, Message } from "../messages.ts";
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
 * The latest `keep` images of the history sent in full, older ones named in words where they were (`[File "box.png",
 * image/png, 1048576 bytes, sent earlier]`); other files are left as they are. As a handoff's `historyFilter`
 * (`keepLatestImages(1)`), or for every request with the network's `imagesSent`.
 */
export function keepLatestImages(keep: number): (messages: readonly Message[]) => Message[] {
  return (messages) => {
    let left = keep;
    const out: Message[] = [];
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i]!;
      if (message.role !== "user" || !message.files?.some(isImage)) {
        out.push(message);
        continue;
      }
      const sent: FileRef[] = [];
      const named: string[] = [];
      for (const file of [...message.files].reverse()) {
        if (!isImage(file) || left-- > 0) sent.unshift(file);
        else named.unshift(`[File "${file.name}", ${file.mediaType}, ${file.size} bytes, sent earlier]`);
      }
      const { files: _all, ...rest } = message;
      const content = named.length ? [rest.content, ...named].filter(Boolean).join("\n") : rest.content;
      out.push({ ...rest, content, ...(sent.length ? { files: sent } : {}) });
    }
    return out.reverse();
  };
}

function isImage(file: FileRef): boolean {
  return file.mediaType.startsWith("image/");
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
