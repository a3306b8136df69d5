import { describe, expect, it, vi } from "vitest";
import { readConfig } from "../../src/config.ts";
import { createModel } from "../../src/conversation/configured-model.ts";
import { redactingModel } from "../../src/conversation/redacting-model.ts";
import type { Message } from "../../src/runtime/messages.ts";
import type { ModelRequest } from "../../src/runtime/ports/model-port.ts";
import type { Model } from "../../src/runtime/index.ts";
import { Redactor } from "../../src/runtime/redact.ts";
import { providerModel, step } from "../support/model-step.ts";
import { scenario } from "../support/scenario.ts";
import { inject } from "vitest";

const SHAPES = [
  "sk-proj-4Jq9XvZ2LmN8pQ7rS6tU5wY3",
  "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
  "c2Vzc2lvbi1zZWNyZXQ+Lz0=",
  "3f2b9c4e-1a7d-4e8b-9c2f-6d5a4b3c2e1f",
];
const chunk = (delta: unknown) =>
  JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }] });
const STACK = "Error: upstream rejected {{key}}\n    at handler (/srv/app/server.js:12:5)\n    at process (node:internal/process:1:1)";

/** Every way a provider failure reaches the adapter, each echoing the key it was sent. */
const PATHS = {
  "HTTP error before the stream": {
    maxRetries: 0,
    answers: [{ status: 401, error: { message: "Incorrect API key provided: {{key}}", code: "invalid_api_key" } }],
  },
  "retries exhausted": {
    maxRetries: 2,
    answers: [0, 1, 2].map(() => ({
      status: 500,
      error: { message: `internal error for {{key}}\n${STACK}` },
      headers: { "retry-after-ms": "1" },
    })),
  },
  "an HTML error page with a stack trace": {
    maxRetries: 0,
    answers: [{ status: 502, body: `<html><body><pre>${STACK}</pre></body></html>` }],
  },
  "an error object inside a started stream": {
    maxRetries: 0,
    answers: [
      {
        raw: `data: ${chunk({ role: "assistant", content: "Hel" })}\n\ndata: ${JSON.stringify({ error: { message: "stream failed for {{key}}", code: "server_error" } })}\n\n`,
      },
    ],
  },
  "a failed Responses API response": {
    maxRetries: 0,
    api: "responses" as const,
    answers: [
      {
        raw: `event: response.failed\ndata: ${JSON.stringify({ type: "response.failed", response: { status: "failed", error: { code: "server_error", message: "failed for {{key}}" } } })}\n\n`,
      },
    ],
  },
};

describe("provider failures never carry a key, whatever its shape, whichever path", () => {
  for (const [path, { maxRetries, answers, ...rest }] of Object.entries(PATHS)) {
    it.each(SHAPES)(`${path}: %s`, async (key) => {
      const s = await scenario(answers as never);
      const log: string[] = [];
      const r = await step(
        providerModel({ apiKey: key, maxRetries, log: (line) => log.push(line) }),
        s.tag("x"),
        "api" in rest ? { settings: { api: rest.api } } : {},
      );
      expect(r.error).toBeDefined();
      expect(r.error!.message).not.toContain(key);
      expect(r.error!.message).not.toMatch(/\/srv\/|at handler|<html/);
      expect(r.error!.message.length).toBeLessThan(200);
      // The provider's own words go to the operator's log (redacted there by the model's redactor).
      expect(log.join("\n")).toContain(key);
    });
  }

  it("a network failure says only that the provider could not be reached", async () => {
    const r = await step(providerModel({ apiKey: SHAPES[0], baseURL: "http://127.0.0.1:9/v1" }), "x");
    expect(r.error).toMatchObject({ code: "model_unavailable", message: "The model provider could not be reached." });
  });

  it("says the provider's status and error code in a message of its own", async () => {
    const s = await scenario([{ status: 401, error: { message: "Incorrect API key provided: {{key}}", code: "invalid_api_key" } }]);
    const r = await step(providerModel(), s.tag("x"));
    expect(r.error).toMatchObject({
      code: "model_auth_failed",
      status: 401,
      message: "The model provider answered 401 (invalid_api_key): it refused the credentials; check OPENAI_API_KEY.",
    });
  });

  it("logs through the redactor: the configured key never reaches a log line", async () => {
    const key = SHAPES[2]!;
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const model: Model = createModel(
        readConfig({ OPENAI_API_KEY: key, OPENAI_BASE_URL: `${inject("fakeOpenAIUrl")}/v1`, OPENAI_MAX_RETRIES: "0" }),
        new Redactor([key]),
      )!;
      const s = await scenario([{ status: 401, error: { message: "Incorrect API key provided: {{key}}" } }]);
      const events = model.stream({
        agent: "a",
        model: "m",
        instructions: "",
        messages: [{ role: "user", content: s.tag("x") }],
        tools: [],
        settings: {},
        signal: new AbortController().signal,
      });
      await expect(async () => {
        for await (const _ of events);
      }).rejects.toThrow();
      const lines = warn.mock.calls.flat().join("\n");
      expect(lines).toContain("Incorrect API key provided: [redacted]");
      expect(lines).not.toContain(key);
    } finally {
      warn.mockRestore();
    }
  });
});

describe("the model as a conversation uses it", () => {
  /** A model that records what it is sent and answers nothing. */
  function recording(label?: string) {
    const sent: ModelRequest[] = [];
    const model: Model = {
      ...(label ? { label } : {}),
      async *stream(request) {
        sent.push(request);
      },
    };
    return { model, sent };
  }
  const ask = async (model: Model, messages: Message[]) => {
    const request = { agent: "triage", model: "m", instructions: "Key s3cret-value.", messages, tools: [], settings: {} };
    for await (const _ of model.stream({ ...request, signal: new AbortController().signal }));
  };

  it("is sent the instructions and messages redacted, each message redacted once however many steps send it", async () => {
    const inner = recording();
    const model = redactingModel(inner.model, new Redactor(["s3cret-value"]));
    const history: Message[] = [{ role: "user", content: "my key is s3cret-value" }];
    await ask(model, history);
    history.push({ role: "assistant", agent: "triage", content: "Noted." });
    await ask(model, history);
    expect(inner.sent.map((r) => r.instructions)).toEqual(["Key [redacted].", "Key [redacted]."]);
    expect(inner.sent[1]!.messages).toEqual([
      { role: "user", content: "my key is [redacted]" },
      { role: "assistant", agent: "triage", content: "Noted." },
    ]);
    // The second step is sent the first step's copy of the message, not a new one.
    expect(inner.sent[1]!.messages[0]).toBe(inner.sent[0]!.messages[0]);
    expect("label" in model).toBe(false);
  });

  it("keeps the label of a model that is not a provider's, so run-start still says it is the demo", () => {
    expect(redactingModel(recording("offline demo").model, new Redactor([])).label).toBe("offline demo");
  });
});
