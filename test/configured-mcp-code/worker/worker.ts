/**
 * The example network with its tracking server's bearer token written in the code (not read from
 * an environment variable): the runtime learns it from the network, and must redact it all the same.
 */
import { createSupportNetwork } from "../../../src/agents/index.ts";
import { createHandoffWorker, type WorkerVars } from "../../../src/cloudflare/index.ts";
import { mcpClient } from "../../../src/mcp/index.ts";

/** The token the MCP test server's secured path wants, as a team might paste it into its code. */
export const CODE_TOKEN = "mcp-bearer 5f2c9a7e-secret";

interface Env extends WorkerVars {
  CODE_MCP_URL: string;
}

const worker = createHandoffWorker<Env>({
  mcp: mcpClient(),
  network: (env) =>
    createSupportNetwork("gpt-4o-mini", {
      tracking: { name: "tracking", url: env.CODE_MCP_URL, headers: { authorization: `Bearer ${CODE_TOKEN}` } },
    }),
});

export const Conversation = worker.Conversation;
export const OperatorDesk = worker.OperatorDesk;
export default worker.app;
