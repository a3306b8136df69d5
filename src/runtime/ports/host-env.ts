/**
 * What a host gives the ports that reach other services (MCP servers, remote agents): its environment, and headers a
 * declaration reads from it (secrets stay out of the code that declares the service; their values are redacted
 * everywhere).
 */

/** What a `headers` function is given: the Worker's environment, or whatever the host passes. */
export type HostEnv = Readonly<Record<string, unknown>>;

/** Headers from the environment; declared through a method, so a function of a Worker's own `Env` type fits. */
export type HeadersFromEnv = { bivarianceHack(env: HostEnv): Readonly<Record<string, string>> }["bivarianceHack"];

/** The headers a service is sent: given, or read from the environment. */
export function headersFor(
  service: { headers?: Readonly<Record<string, string>> | HeadersFromEnv },
  env: HostEnv,
): Readonly<Record<string, string>> {
  const headers = service.headers;
  if (headers === undefined) return {};
  return typeof headers === "function" ? headers(env) : headers;
}
