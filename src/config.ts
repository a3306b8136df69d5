import { z } from "zod";

/** The Worker's configuration, read from its environment and validated once per use. */
const ConfigSchema = z.object({
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_MODEL: z.string().min(1).optional(),
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  DEMO_DELAY_MS: z.coerce.number().int().min(0).max(2000).default(0),
  MAX_STEPS: z.coerce.number().int().min(1).max(100).optional(),
  MAX_HANDOFFS_PER_TURN: z.coerce.number().int().min(0).max(100).optional(),
});

export type Config = z.infer<typeof ConfigSchema>;

export function readConfig(env: object): Config {
  const strings = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => key in ConfigSchema.shape && typeof value === "string" && value !== ""),
  );
  const parsed = ConfigSchema.safeParse(strings);
  if (!parsed.success) throw new TypeError(`Invalid Worker configuration: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
