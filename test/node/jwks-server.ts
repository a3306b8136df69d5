/**
 * An identity provider's key set for the tests, in Node: RSA and EC keys made with `jose`, a JWKS
 * document the Worker fetches, and controls to publish another key (rotation), to go down, answer
 * slowly or answer garbage, and to count fetches. The private keys go to the tests, which mint
 * tokens with them in workerd.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, exportSPKI, generateKeyPair, type JWK } from "jose";

export interface JwksFixture {
  url: string;
  /** Private keys by kid (`rs1` published from the start, `rs2` on request, `es1` published). */
  keys: Record<string, JWK>;
  /** The published RSA key as PEM: the bytes an algorithm-confusion attack would use as an HMAC secret. */
  rs1PublicPem: string;
  close(): Promise<void>;
}

type Mode = "ok" | "down" | "slow" | "garbage";

export async function startJwksServer(): Promise<JwksFixture> {
  const made = await Promise.all(
    (["rs1", "rs2", "es1"] as const).map(async (kid) => {
      const alg = kid.startsWith("rs") ? "RS256" : "ES256";
      const pair = await generateKeyPair(alg, { extractable: true });
      return { kid, alg, pair, publicJwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" } };
    }),
  );
  const published = new Set(["rs1", "es1"]);
  let mode: Mode = "ok";
  let fetches = 0;
  const server = createServer(async (req, res) => {
    if (req.url === "/__jwks/stats") return void res.end(JSON.stringify({ fetches }));
    if (req.url === "/__jwks" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += String(chunk);
      const control = JSON.parse(body) as { mode?: Mode; publish?: string[] };
      if (control.mode) mode = control.mode;
      for (const kid of control.publish ?? []) published.add(kid);
      return void res.end("{}");
    }
    fetches++;
    if (mode === "down") return void res.writeHead(503).end("down");
    if (mode === "slow") await new Promise((resolve) => setTimeout(resolve, 7_000));
    if (mode === "garbage") return void res.writeHead(200, { "content-type": "application/json" }).end('{"keys": "not a list"');
    const keys = made.filter((k) => published.has(k.kid)).map((k) => k.publicJwk);
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const keys = Object.fromEntries(
    await Promise.all(made.map(async (k) => [k.kid, { ...(await exportJWK(k.pair.privateKey)), kid: k.kid, alg: k.alg }] as const)),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    keys,
    rs1PublicPem: await exportSPKI(made[0]!.pair.publicKey),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
