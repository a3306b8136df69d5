import type { TestProject } from "vitest/node";
import { startFakeOpenAI } from "./fake-openai-server.ts";

/** Starts the fake OpenAI-compatible server in Node; workerd reaches it over loopback. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fake = await startFakeOpenAI();
  project.provide("fakeOpenAIUrl", fake.url);
  return () => fake.close();
}

declare module "vitest" {
  export interface ProvidedContext {
    fakeOpenAIUrl: string;
  }
}
