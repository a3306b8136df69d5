import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startFakeOpenAI } from "./fake-openai-server.ts";
import { startJwksServer } from "./jwks-server.ts";
import { startMcpTestServer } from "./mcp-test-server.ts";
import { startA2ARemote } from "./a2a-remote-server.ts";

/** Kept in the repository (test/fixtures/openai-streams/README.md says where each was recorded), so a fresh clone anywhere runs. */
const FIXTURES = fileURLToPath(new URL("../fixtures/openai-streams", import.meta.url));

/** The recorded provider streams, handed to the workerd tests (which cannot read files). */
function readFixtures(): Record<string, { sse: string; expected: unknown }> {
  const names = readdirSync(FIXTURES).filter((name) => name.endsWith(".sse"));
  return Object.fromEntries(
    names.map((name) => {
      const base = name.slice(0, -".sse".length);
      return [
        base,
        {
          sse: readFileSync(`${FIXTURES}/${name}`, "utf8"),
          expected: JSON.parse(readFileSync(`${FIXTURES}/${base}.expected.json`, "utf8")),
        },
      ];
    }),
  );
}

/** Starts the fake OpenAI-compatible server and the MCP test servers in Node; workerd reaches them over loopback. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fake = await startFakeOpenAI();
  const mcp = await startMcpTestServer();
  const jwks = await startJwksServer();
  const a2a = await startA2ARemote();
  project.provide("fakeOpenAIUrl", fake.url);
  project.provide("mcpUrl", mcp.url);
  project.provide("a2aRemoteUrl", a2a.url);
  project.provide("jwks", { url: jwks.url, keys: jwks.keys, rs1PublicPem: jwks.rs1PublicPem });
  project.provide("providerFixtures", readFixtures());
  provideProperties(project);
  return async () => {
    await fake.close();
    await mcp.close();
    await jwks.close();
    await a2a.close();
  };
}

/** npm test runs a fixed-seed, bounded subset (the inbox's seed varies by day in CI); npm run test:deep sets PROPERTY_RUNS and PROPERTY_SEED. */
function provideProperties(project: TestProject): void {
  project.provide("propertyRuns", Number(process.env.PROPERTY_RUNS ?? 150));
  project.provide("propertySeed", Number(process.env.PROPERTY_SEED ?? 20261129));
  // The inbox property is cheap enough to try a new seed each day in CI; the seed is in the test's name to replay a failure.
  const day = Math.floor(Date.now() / 86_400_000);
  project.provide("inboxSeed", Number(process.env.PROPERTY_SEED ?? (process.env.CI ? day : 20261129)));
}
