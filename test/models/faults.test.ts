import { describe, expect, it } from "vitest";
import { MemoryFiles } from "../../src/testing/memory-files.ts";
import { providerModel, step } from "../support/model-step.ts";
import { scenario } from "../support/scenario.ts";

/** Polls until `check` holds; the fake server sees a client's disconnect a moment after it happens. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the condition never held");
}

describe("provider faults", () => {
  it("retries a 429 honouring Retry-After, then succeeds", async () => {
    const s = await scenario([{ status: 429, error: { message: "slow down" }, headers: { "retry-after-ms": "20" } }, { text: "ok" }]);
    const r = await step(providerModel({ maxRetries: 2 }), s.tag("x"));
    expect(r.text).toBe("ok");
    expect((await s.sent()).requests).toHaveLength(2);
  });

  it("retries a 429 on a request that carries an image, which the retry sends whole again", async () => {
    const s = await scenario([{ status: 429, error: { message: "slow down" }, headers: { "retry-after-ms": "20" } }, { text: "ok" }]);
    const files = new MemoryFiles();
    const bytes = Uint8Array.from({ length: 5000 }, (_, i) => (i * 7) & 0xff);
    bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const photo = await files.add({ bytes, mediaType: "image/png", name: "box.png" });
    const r = await step(providerModel({ maxRetries: 2 }), s.tag("x"), {
      messages: [{ role: "user", content: s.tag("look"), files: [photo] }],
      files,
    });
    expect(r.text).toBe("ok");
    const { requests } = await s.sent();
    const url = `data:image/png;base64,${btoa(String.fromCharCode(...bytes))}`;
    expect(requests.map((request) => JSON.stringify(request.messages).includes(JSON.stringify(url)))).toEqual([true, true]);
  });

  it("gives up on 5xx after the bounded number of attempts with model_unavailable and the status", async () => {
    const fail = { status: 503, error: { message: "overloaded" }, headers: { "retry-after-ms": "5" } };
    const s = await scenario([fail, fail, fail, { text: "never" }]);
    const r = await step(providerModel({ maxRetries: 2 }), s.tag("x"));
    expect(r.error).toMatchObject({ code: "model_unavailable", status: 503 });
    expect(r.error!.message).toBe("The model provider answered 503: it failed or is overloaded.");
    expect((await s.sent()).requests).toHaveLength(3);
  });

  it.each([
    [400, "model_bad_request"],
    [404, "model_bad_request"],
    [401, "model_auth_failed"],
    [403, "model_auth_failed"],
  ] as const)("does not retry a %i: %s", async (status, code) => {
    const s = await scenario([
      { status, error: { message: "Incorrect API key provided: sk-test-secret-key-never-shown" } },
      { text: "never" },
    ]);
    const r = await step(providerModel({ maxRetries: 2 }), s.tag("x"));
    expect(r.error).toMatchObject({ code, status });
    expect(r.error!.message).not.toContain("sk-test-secret");
    expect((await s.sent()).requests).toHaveLength(1);
  });

  it("retries a connection dropped before the first byte", async () => {
    const s = await scenario([{ text: "lost", dropAfter: 0 }, { text: "second try" }]);
    const r = await step(providerModel({ maxRetries: 2 }), s.tag("x"));
    expect(r.text).toBe("second try");
  });

  it("does not retry once the step has streamed: a dropped connection is model_stream_interrupted", async () => {
    const s = await scenario([{ text: "partial answer here", dropAfter: 3 }, { text: "never" }]);
    const r = await step(providerModel({ maxRetries: 2 }), s.tag("x"));
    expect(r.error?.code).toBe("model_stream_interrupted");
    expect(r.deltas).toBeGreaterThan(0);
    expect((await s.sent()).requests).toHaveLength(1);
  });

  it("fails a stream that ends without its terminating event, for both APIs", async () => {
    for (const api of ["chat", "responses"] as const) {
      const s = await scenario([{ toolCalls: [{ name: "weather", arguments: '{"location":"Half"}' }], endAfter: 3 }]);
      const r = await step(providerModel(), s.tag("x"), { settings: { api } });
      expect(r.error?.code).toBe("model_stream_interrupted");
      expect(r.toolCalls).toEqual([]);
    }
  });

  it("fails a stalled stream with model_timeout and aborts the request", async () => {
    const s = await scenario([{ text: "stalling now", stallAfter: 2 }]);
    const r = await step(providerModel({ idleTimeoutMs: 300 }), s.tag("x"));
    expect(r.error?.code).toBe("model_timeout");
    await eventually(async () => (await s.sent()).aborted === 1);
  });

  it("times the gap between chunks, not the stream: a slow stream that never pauses past the limit completes", async () => {
    // Twelve chunks 100 ms apart: 1.2 s in all, four times the 300 ms limit, no gap near it.
    const steady = await scenario([{ text: "a steady answer, chunk by chunk", chunkChars: 3, delayMs: 100 }]);
    const r = await step(providerModel({ idleTimeoutMs: 300 }), steady.tag("x"));
    expect(r.error).toBeUndefined();
    expect(r.text).toBe("a steady answer, chunk by chunk");
    // The same pace, then silence: the limit counts from the last chunk.
    const stalls = await scenario([{ text: "steady, then nothing at all", chunkChars: 3, delayMs: 100, stallAfter: 6 }]);
    const started = Date.now();
    const stalled = await step(providerModel({ idleTimeoutMs: 300 }), stalls.tag("x"));
    expect(stalled.error?.code).toBe("model_timeout");
    expect(Date.now() - started).toBeGreaterThanOrEqual(500 + 300);
  });

  it("aborts the model call when the runtime cancels it", async () => {
    const s = await scenario([{ text: "a long answer", holdAfter: 2 }]);
    const controller = new AbortController();
    const pending = step(providerModel(), s.tag("x"), { signal: controller.signal });
    await eventually(async () => (await s.sent()).requests.length === 1);
    controller.abort();
    const r = await pending;
    expect(r.error?.code).toBe("run_aborted");
    await eventually(async () => (await s.sent()).aborted === 1);
    await s.release();
  });
});
