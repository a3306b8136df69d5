import type { Env } from "../env.ts";
import type { Access } from "./auth.ts";

/** The Hono environment of every route: the Worker's bindings and who is calling. */
export type AppEnv = { Bindings: Env; Variables: { access: Access } };
