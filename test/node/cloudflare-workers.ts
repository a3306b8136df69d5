/**
 * `cloudflare:workers` for the Node tests of the HTTP app: its Durable Object classes are imported
 * with the routes that reach them, never constructed there (their tests run in workerd).
 */
export class DurableObject<Env = unknown> {
  constructor(
    readonly ctx: unknown,
    readonly env: Env,
  ) {}
}
