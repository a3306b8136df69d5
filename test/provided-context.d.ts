/** What the Node-side global setup provides to the tests in workerd (vitest's provide/inject). */
declare module "vitest" {
  export interface ProvidedContext {
    fakeOpenAIUrl: string;
    /** The MCP test servers (test/node/mcp-test-server.ts): /stateful/mcp, /secured/mcp, /legacy/sse. */
    mcpUrl: string;
    providerFixtures: Record<string, { sse: string; expected: unknown }>;
    propertyRuns: number;
    propertySeed: number;
  }
}

export {};
