/** The AI SDK's own chat client (`AbstractChat`, what `useChat` is built on) over `DefaultChatTransport`, pointed at the Worker. */
import { exports } from "cloudflare:workers";
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from "ai";

/** The chat's state in plain memory: useChat keeps it in React, this test in an array. */
class MemoryState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => void this.messages.push(message);
  popMessage = () => void this.messages.pop();
  replaceMessage = (index: number, message: UIMessage) => void (this.messages[index] = message);
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

export class TestChat extends AbstractChat<UIMessage> {
  readonly memory: MemoryState;
  constructor(conversationId: string) {
    const memory = new MemoryState();
    super({
      id: conversationId,
      state: memory,
      transport: new DefaultChatTransport<UIMessage>({
        api: `https://chat.test/v1/conversations/${conversationId}/chat`,
        fetch: (input, init) => exports.default.fetch(new Request(input as RequestInfo, init)),
      }),
      // As useChat is set up to send tool outputs and approval responses back by itself.
      sendAutomaticallyWhen: (options) =>
        lastAssistantMessageIsCompleteWithToolCalls(options) || lastAssistantMessageIsCompleteWithApprovalResponses(options),
    });
    this.memory = memory;
  }
  get last(): UIMessage {
    return this.memory.messages.at(-1)!;
  }
}
