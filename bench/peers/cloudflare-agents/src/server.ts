/**
 * The peer: Cloudflare's AIChatAgent as its documentation starts one (README quick start and
 * examples/ai-chat), with the AI SDK's OpenAI-compatible provider pointed at the bench's fake
 * provider and one tool, `lookup_order`, used over several steps.
 *
 * Changes made to instrument it, and nothing else:
 * 1. the SQL cursors' `rowsWritten` are summed (and the bytes bound to writing statements), by
 *    wrapping `ctx.storage.sql.exec` in the constructor;
 * 2. `onRequest` answers GET …/stats with those sums and the message count;
 * 3. the provider is `createOpenAICompatible` with the bench's base URL instead of Workers AI.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { AIChatAgent, type OnChatMessageOptions } from "@cloudflare/ai-chat";
import { routeAgentRequest } from "agents";
import { convertToModelMessages, isStepCount, streamText, tool } from "ai";
import { z } from "zod";

interface Env {
  ChatAgent: DurableObjectNamespace;
  OPENAI_BASE_URL: string;
  OPENAI_API_KEY: string;
}

const ORDERS: Record<string, { orderId: string; item: string; amountUsd: number; status: string; charges: number }> = {
  A1001: { orderId: "A1001", item: "Mechanical keyboard", amountUsd: 129, status: "shipped", charges: 2 },
  A1002: { orderId: "A1002", item: "USB-C dock", amountUsd: 89.5, status: "processing", charges: 1 },
};

const tools = {
  lookup_order: tool({
    description: "Fetch an order by id: item, amount, status and charges.",
    inputSchema: z.object({ orderId: z.string().min(1).describe("The order id, for example A1001.") }),
    execute: async ({ orderId }) => ORDERS[orderId] ?? { error: `No order ${orderId}` },
  }),
};

export class ChatAgent extends AIChatAgent<Env> {
  written = { rows: 0, bytes: 0 };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    const exec = sql.exec.bind(sql);
    const written = this.written;
    // Instrumentation 1: every statement's rows written, read once its cursor is consumed.
    sql.exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      const writes = /^\s*(insert|update|delete|replace)/i.test(query);
      queueMicrotask(() => {
        written.rows += cursor.rowsWritten;
        if (writes && cursor.rowsWritten > 0)
          written.bytes += bindings.reduce<number>(
            (n, b) => n + (typeof b === "string" ? b.length : b instanceof ArrayBuffer ? b.byteLength : 8),
            0,
          );
      });
      return cursor;
    }) as typeof sql.exec;
  }

  async onChatMessage(onFinish: unknown, options?: OnChatMessageOptions) {
    const provider = createOpenAICompatible({
      name: "bench",
      baseURL: this.env.OPENAI_BASE_URL,
      apiKey: this.env.OPENAI_API_KEY,
      includeUsage: true,
    });
    const result = streamText({
      model: provider.chatModel("gpt-4o-mini"),
      system: "You are a support assistant. Look orders up with lookup_order before answering about them.",
      messages: await convertToModelMessages(this.messages),
      tools,
      stopWhen: isStepCount(5),
      abortSignal: options?.abortSignal,
      onFinish: onFinish as never,
    });
    return result.toUIMessageStreamResponse();
  }

  // Instrumentation 2.
  override async onRequest(request: Request): Promise<Response> {
    if (new URL(request.url).pathname.endsWith("/stats"))
      return Response.json({ rowsWritten: this.written.rows, bytesWritten: this.written.bytes, messages: this.messages.length });
    return new Response("not found", { status: 404 });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    return (await routeAgentRequest(request, env)) ?? new Response("Not found", { status: 404 });
  },
};
