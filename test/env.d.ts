import type { Env as WorkerEnv } from "../src/env.ts";

declare module "vitest" {
  export interface ProvidedContext {
    fakeOpenAIUrl: string;
    providerFixtures: Record<string, { sse: string; expected: unknown }>;
    propertyRuns: number;
    propertySeed: number;
  }
}

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../src/index.ts");
    }
    interface Env extends WorkerEnv {}
  }
}
