/**
 * An upload no message sends goes after FILE_ORPHAN_AFTER (10 s in this project, its least), by the conversation's own
 * alarm: watched from outside, its file route answers until then and 404 after, and its bytes leave the bucket. A value
 * under the least is refused with what to set.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { until } from "../support/until.ts";
import { call, chat, scenario } from "../support/worker.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]);

describe("an upload no message sends", () => {
  it("is served until FILE_ORPHAN_AFTER has passed, then swept by the alarm, bytes and all", async () => {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hello"));
    const uploadedAt = Date.now();
    const uploaded = await call(`/v1/conversations/${s.conversationId}/files?name=orphan.png`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: PNG,
    });
    expect(uploaded.status).toBe(201);
    const { file } = (await uploaded.json()) as { file: { id: string } };
    const status = async () => (await call(`/v1/conversations/${s.conversationId}/files/${file.id}`)).status;
    expect(await status()).toBe(200);
    await until(status, (code) => code === 404, "the orphan is swept", 30_000);
    expect(Date.now() - uploadedAt).toBeGreaterThanOrEqual(10_000);
    expect(await env.FILES!.head(`files/${file.id}`)).toBeNull();
  }, 40_000);

  it("is kept at least 10 s: a shorter FILE_ORPHAN_AFTER is refused, naming the least", () => {
    expect(() => readConfig({ FILE_ORPHAN_AFTER: "5s" })).toThrow(/FILE_ORPHAN_AFTER is at least 10s/);
    expect(readConfig({ FILE_ORPHAN_AFTER: "90s" }).FILE_ORPHAN_AFTER).toBe(90_000);
    expect(readConfig({}).FILE_ORPHAN_AFTER).toBe(3_600_000);
  });
});
