/** What the Node-side global setup provides to the tests in workerd (vitest's provide/inject). */
declare module "vitest" {
  export interface ProvidedContext {
    fakeOpenAIUrl: string;
    providerFixtures: Record<string, { sse: string; expected: unknown }>;
    propertyRuns: number;
    propertySeed: number;
  }
}

export {};
