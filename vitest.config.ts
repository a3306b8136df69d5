import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // The Worker under test talks to the fake OpenAI-compatible server with the real `openai` client.
        bindings: {
          OPENAI_BASE_URL: `${inject("fakeOpenAIUrl")}/v1`,
          OPENAI_API_KEY: "sk-test-secret-key-never-shown",
          OPENAI_MAX_RETRIES: "0",
          ALLOW_ANONYMOUS: "true",
        },
      },
    })),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    // Node-side end-to-end tests against wrangler dev; run by node --test.
    exclude: ["test/e2e/**", "test/deep/**", "node_modules/**"],
    // The first request of a file loads the Worker's modules into workerd: seconds on a shared machine.
    testTimeout: 20_000,
    globalSetup: ["test/node/global-setup.ts"],
  },
});
