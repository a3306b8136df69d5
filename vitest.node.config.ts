import { defineConfig } from "vitest/config";

/**
 * The tests of the pure run loop and of the model adapters under plain Node: neither imports
 * anything from Cloudflare, so they need no workerd (the adapters talk to the fake provider over
 * loopback with the real `openai` client). StrykerJS drives this config (`npm run test:mutation`).
 */
export default defineConfig({
  // The HTTP app's tests import the routes, and with them the Durable Object classes (tested in workerd).
  resolve: { alias: { "cloudflare:workers": new URL("./test/node/cloudflare-workers.ts", import.meta.url).pathname } },
  test: {
    include: [
      "test/runtime/**/*.test.ts",
      "test/properties/runtime.property.test.ts",
      "test/models/**/*.test.ts",
      "test/remote/**/*.test.ts",
      "test/router/**/*.test.ts",
      "test/http/**/*.test.ts",
      "test/docs/**/*.test.ts",
      "test/memory/**/*.test.ts",
    ],
    globalSetup: ["test/node/global-setup.ts"],
    setupFiles: ["test/node/workerd-globals.ts"],
    testTimeout: 20_000,
  },
});
