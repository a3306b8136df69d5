import { expect, inject } from "vitest";
import type { ScriptedAnswer } from "../node/fake-openai-server.ts";

const fakeUrl = () => inject("fakeOpenAIUrl");

export interface SentRequest {
  model: string;
  messages: Array<{
    role: string;
    content: string | null;
    tool_calls?: Array<{ id: string; function: { name: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string; description: string; parameters: unknown } }>;
  stream: boolean;
}

/**
 * A script on the fake OpenAI server; its id must appear in the conversation (see `tag`). A function of `tag` makes
 * answers that carry it (a delegated run's request, which its own calls are matched by).
 */
export async function scenario(script: ScriptedAnswer[] | ((tag: (message: string) => string) => ScriptedAnswer[])) {
  const id = `scn${crypto.randomUUID().replaceAll("-", "")}`;
  const tag = (message: string) => `${message} [${id}]`;
  const answers = typeof script === "function" ? script(tag) : script;
  const post = async (answers: ScriptedAnswer[]) => {
    const res = await fetch(`${fakeUrl()}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers }) });
    expect(res.ok).toBe(true);
  };
  await post(answers);
  return {
    id,
    conversationId: `conv-${id}`,
    /** Tags a user message so the fake server finds this scenario's script. */
    tag,
    async sent(): Promise<{ requests: SentRequest[]; remaining: number; aborted: number }> {
      return (await (await fetch(`${fakeUrl()}/__scenarios/${id}`)).json()) as {
        requests: SentRequest[];
        remaining: number;
        aborted: number;
      };
    },
    /** Replaces the script before the first model call: for answers that name what the conversation made first (an upload's id). */
    rescript: post,
    release: () => fetch(`${fakeUrl()}/__scenarios/${id}/release`, { method: "POST" }),
  };
}
