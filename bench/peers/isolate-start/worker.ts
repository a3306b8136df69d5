/**
 * PUT /bundles/:name { modules, flags, path } keeps a Worker's bundle in this isolate's memory;
 * POST /start/:name loads it into a fresh isolate and sends it its first request (GET `path`),
 * answering once that response's body has been read. The client times the POST: the bundle crosses
 * no wire then, so bundles of any size are timed alike.
 */
interface Bundle {
  modules: Record<string, string>;
  flags: string[];
  path: string;
}

interface Env {
  LOADER: WorkerLoader;
}

const bundles = new Map<string, Bundle>();

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const [, action, name = ""] = new URL(request.url).pathname.split("/");
    if (action === "bundles" && request.method === "PUT") {
      bundles.set(name, (await request.json()) as Bundle);
      return new Response(null, { status: 204 });
    }
    const bundle = bundles.get(name);
    if (action !== "start" || !bundle) return new Response(`no bundle ${name}`, { status: 404 });
    const worker = env.LOADER.load({
      compatibilityDate: "2026-11-01",
      compatibilityFlags: bundle.flags,
      mainModule: Object.keys(bundle.modules)[0]!,
      modules: bundle.modules,
      // Plain variables only: the first request must not need a binding the loaded Worker has not got.
      env: { ALLOW_ANONYMOUS: "true", OFFLINE_MODEL: "true" },
      globalOutbound: null,
    });
    try {
      const res = await worker.getEntrypoint().fetch(new Request(`http://bench${bundle.path}`));
      const body = await res.text();
      return Response.json({ status: res.status, bytes: body.length });
    } catch (error) {
      return new Response(`${name} did not start: ${error instanceof Error ? error.stack : String(error)}`, { status: 502 });
    }
  },
};
