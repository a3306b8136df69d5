/**
 * The one wait for the user through the AI SDK's own client: `AbstractChat` (what `useChat` is
 * built on) with `DefaultChatTransport`, pointed at the Worker. A question and a client tool reach
 * the page as calls left input-available with a `data-request` part that says what is asked; the
 * page answers them with `addToolOutput`, and the chat sends the message back by itself
 * (`lastAssistantMessageIsCompleteWithToolCalls`), which resumes the turn.
 */
import { exports } from "cloudflare:workers";
import type { UIMessage } from "ai";
import { TestChat } from "../support/ai-chat.ts";
import { describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { scenario, stored } from "../support/worker.ts";

const transfer = { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "delivery" }) }] };
const slots = ["Mon 9:00-12:00", "Tue 9:00-12:00"];

type Part = UIMessage["parts"][number] & { toolCallId?: string; state?: string; data?: Record<string, unknown> };
const partOf = (chat: TestChat, toolCallId: string) => (chat.last.parts as Part[]).find((p) => p.toolCallId === toolCallId);
const requestOf = (chat: TestChat, toolCallId: string) =>
  (chat.last.parts as Part[]).find((p) => p.type === "data-request" && p.data?.toolCallId === toolCallId);

describe("useChat's client answers what the turn asks", () => {
  it("a client tool and a question, each answered with addToolOutput: the chat sends them back and the turn resumes", async () => {
    const s = await scenario([
      transfer,
      { toolCalls: [{ id: "c", name: "choose_delivery_slot", arguments: JSON.stringify({ orderId: "A1002", slots }) }] },
      { toolCalls: [{ id: "q", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "Booked for Tuesday, redelivered on the 9th." },
    ]);
    const chat = new TestChat(s.conversationId);
    await chat.sendMessage({ text: s.tag("I need a delivery slot for A1002") });
    expect(chat.status).toBe("ready");
    expect(partOf(chat, "c")).toMatchObject({
      type: "tool-choose_delivery_slot",
      state: "input-available",
      input: { orderId: "A1002", slots },
    });
    expect(requestOf(chat, "c")?.data).toMatchObject({ kind: "client-tool", schema: { required: ["slot"] } });

    await chat.addToolOutput({ tool: "choose_delivery_slot", toolCallId: "c", output: { slot: slots[1] } });
    await until(
      async () => chat.last,
      () => requestOf(chat, "q") !== undefined && chat.status === "ready",
      "the question after the slot",
    );
    expect(partOf(chat, "c")).toMatchObject({ state: "output-available", output: { slot: slots[1] } });
    expect(requestOf(chat, "q")?.data).toMatchObject({ kind: "question", message: expect.stringContaining("A1002") });

    await chat.addToolOutput({ tool: "arrange_redelivery", toolCallId: "q", output: { day: "2026-12-09", where: "neighbour" } });
    await until(
      async () => chat.last,
      () => chat.status === "ready" && chat.last.parts.some((p) => p.type === "text" && p.text.startsWith("Booked for Tuesday")),
      "the turn's answer",
    );
    const tools = (await stored(s.conversationId)).messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["t", false],
      ["c", false],
      ["q", false],
    ]);
    // One assistant message in the chat, as useChat keeps a resumed turn.
    expect(chat.memory.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("an MCP server's elicitation: the form's content by addToolOutput goes back to the server", async () => {
    const s = await scenario([
      transfer,
      { toolCalls: [{ id: "h", name: "tracking_hold_at_depot", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "Held in London." },
    ]);
    const chat = new TestChat(s.conversationId);
    await chat.sendMessage({ text: s.tag("please hold the parcel of A1002") });
    expect(requestOf(chat, "h")?.data).toMatchObject({ kind: "elicitation", mode: "form", server: "tracking" });
    await chat.addToolOutput({ tool: "tracking_hold_at_depot", toolCallId: "h", output: { confirm: true, depot: "London" } });
    await until(
      async () => chat.last,
      () => chat.status === "ready" && chat.last.parts.some((p) => p.type === "text" && p.text === "Held in London."),
      "the turn's answer",
    );
    expect(partOf(chat, "h")).toMatchObject({
      state: "output-available",
      output: "The parcel of order A1002 is held at the London depot for collection.",
    });
  });

  it("an answer that does not fit is refused: the chat shows the error, and the request still waits", async () => {
    const s = await scenario([
      transfer,
      { toolCalls: [{ id: "q", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1001" }) }] },
    ]);
    const chat = new TestChat(s.conversationId);
    await chat.sendMessage({ text: s.tag("please redeliver order A1001") });
    await chat.addToolOutput({ tool: "arrange_redelivery", toolCallId: "q", output: { day: "soon", where: "roof" } });
    await until(
      async () => chat.status,
      (status) => status === "error",
      "the refusal",
    );
    expect(chat.error?.message).toMatch(/invalid_answer|does not fit/);
    const view = (await (await exports.default.fetch(new Request(`https://chat.test/v1/conversations/${s.conversationId}`))).json()) as {
      pendingRequests: unknown[];
    };
    expect(view.pendingRequests).toMatchObject([{ toolCallId: "q" }]);
  });
});
