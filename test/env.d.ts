import type { Env as WorkerEnv } from "../src/env.ts";

declare global {
  namespace Cloudflare {
    interface GlobalProps {
      mainModule: typeof import("../src/index.ts");
    }
    interface Env extends WorkerEnv {}
  }
}
