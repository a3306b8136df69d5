/**
 * The Hono app a team gets from createHandoffWorker, mounted under a prefix of its own Worker
 * beside its own routes: the API, access by key and by conversation token, and 404s keep working.
 */
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { createHandoffWorker } from "../../src/cloudflare/index.ts";
import { parseSse } from "../support/sse.ts";
import { scenario } from "../support/worker.ts";

const API_KEY = "test-master-key-0123456789";
const keyed = { ...env, API_KEY, ALLOW_ANONYMOUS: "false" };
const outer = new Hono();
outer.get("/health", (c) => c.text("ok"));
outer.route("/support", createHandoffWorker({ network: createSupportNetwork() }).app);

const request = (path: string, init: RequestInit = {}) => Promise.resolve(outer.request(`https://team.test${path}`, init, keyed));
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("the app mounted under a prefix", () => {
  it("serves the API and the team's own routes side by side", async () => {
    expect(await (await request("/health")).text()).toBe("ok");
    const agents = await request("/support/v1/agents", { headers: bearer(API_KEY) });
    expect(agents.status).toBe(200);
    expect(((await agents.json()) as { entry: string }).entry).toBe("triage");
    expect((await request("/support/v1/agents")).status).toBe(401);
  });

  it("opens a conversation with its token, and no other", async () => {
    const s = await scenario([{ text: "Hello from triage." }]);
    const created = await request("/support/v1/conversations", { method: "POST", headers: bearer(API_KEY) });
    const { id, token } = (await created.json()) as { id: string; token: string };
    const res = await request(`/support/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ message: s.tag("hi") }),
    });
    expect(res.status).toBe(200);
    expect(parseSse(await res.text()).at(-1)).toMatchObject({ type: "done", text: "Hello from triage." });
    expect((await request(`/support/v1/conversations/${id}`, { headers: bearer(token) })).status).toBe(200);
    expect((await request("/support/v1/conversations/someone-else", { headers: bearer(token) })).status).toBe(403);
  });
});
