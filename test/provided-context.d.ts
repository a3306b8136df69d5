/** What the Node-side global setup provides to the tests in workerd (vitest's provide/inject). */
declare module "vitest" {
  export interface ProvidedContext {
    fakeOpenAIUrl: string;
    /** The MCP test servers (test/node/mcp-test-server.ts): /stateful/mcp, /secured/mcp, /legacy/sse. */
    mcpUrl: string;
    /** The remote A2A agent served by the SDK (test/node/a2a-remote-server.ts). */
    a2aRemoteUrl: string;
    providerFixtures: Record<string, { sse: string; expected: unknown }>;
    /** The identity provider's key set (test/node/jwks-server.ts): its URL, the private keys by kid, rs1's public PEM. */
    jwks: { url: string; keys: Record<string, import("jose").JWK>; rs1PublicPem: string };
    propertyRuns: number;
    propertySeed: number;
    /** The inbox property's seed: fixed locally, the day's in CI (so CI tries a new one each day), PROPERTY_SEED when set. */
    inboxSeed: number;
    /** Set by StrykerJS's vitest runner only: "dry-run" or "mutant" (see test/support/mutation.ts). */
    mode?: string;
  }
}

export {};
