import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/** The Worker under test, in workerd, talking to the fake OpenAI-compatible server with the real `openai` client. */
function worker(bindings: Record<string, string> = {}) {
  return cloudflareTest(({ inject }) => ({
    wrangler: { configPath: "./wrangler.toml" },
    miniflare: {
      bindings: {
        OPENAI_BASE_URL: `${inject("fakeOpenAIUrl")}/v1`,
        // Secrets of shapes no pattern would guess: only redaction by value catches them.
        OPENAI_API_KEY: "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        SESSION_SECRET: "c2Vzc2lvbi1zZWNyZXQ+Lz0=/live",
        ORDERS_API_TOKEN: 'tok 7f3a/9c2e%41 "quoted"',
        OPENAI_MAX_RETRIES: "0",
        ALLOW_ANONYMOUS: "true",
        ...bindings,
      },
    },
  }));
}

/** Files that need the Worker configured otherwise than the rest (a binding read once per Durable Object). */
const CONFIGURED = ["test/configured/**/*.test.ts"];

export default defineConfig({
  test: {
    // The first request of a file loads the Worker's modules into workerd: seconds on a shared machine.
    testTimeout: 20_000,
    globalSetup: ["test/node/global-setup.ts"],
    projects: [
      {
        plugins: [worker()],
        test: {
          name: "worker",
          include: ["test/**/*.test.ts"],
          // Node-side end-to-end tests against wrangler dev run under node --test.
          exclude: ["test/e2e/**", "test/deep/**", "node_modules/**", ...CONFIGURED],
        },
      },
      {
        plugins: [worker({ CONVERSATION_BUDGET: JSON.stringify({ modelCalls: 3 }) })],
        test: { name: "conversation-budget", include: CONFIGURED },
      },
    ],
  },
});
