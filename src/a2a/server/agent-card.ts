/**
 * The network's A2A agent card: its entry agent's name and description, one skill per agent a
 * conversation can be handed to (people are not skills: they answer through the operator desk),
 * the JSON-RPC interface on this origin, what is served (streaming and push notifications),
 * this project's handoff extension, and the credentials the Worker takes, from its configuration.
 */
import { FILE_TYPES } from "../../conversation/files/file-checks.ts";
import type { Config } from "../../config.ts";
import type { Network } from "../../runtime/network.ts";
import { A2A_VERSION, HANDOFF_EXTENSION } from "../a2a-wire.ts";

/** The path of the JSON-RPC interface, under the app's own prefix. */
import { A2A_RPC_PATH } from "./offer.ts";

type Scheme = { httpAuthSecurityScheme: { scheme: "Bearer"; bearerFormat?: string; description: string } };

export function agentCard(network: Network, config: Config, base: string): Record<string, unknown> {
  const agents = [...network.agents.values()].filter((agent) => !agent.human);
  const schemes: Record<string, Scheme> = {};
  if (config.API_KEY) schemes.apiKey = { httpAuthSecurityScheme: { scheme: "Bearer", description: "The Worker's API key (API_KEY)." } };
  if (config.AUTH_JWKS_URL || config.AUTH_JWT_SECRET)
    schemes.signIn = {
      httpAuthSecurityScheme: {
        scheme: "Bearer",
        bearerFormat: "JWT",
        description: "A user's sign-in token from the identity provider (behind Cloudflare Access, the Cf-Access-Jwt-Assertion header).",
      },
    };
  return {
    name: network.entry.name,
    description: network.entry.description || `The ${network.entry.name} agent and the agents it hands conversations to.`,
    version: "1",
    supportedInterfaces: [{ url: `${base}${A2A_RPC_PATH}`, protocolBinding: "JSONRPC", protocolVersion: A2A_VERSION }],
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extensions: [
        {
          uri: HANDOFF_EXTENSION,
          description: "A task's metadata names who holds the conversation (`holder`) and the handoffs its turn made (`handoffs`).",
          required: false,
        },
      ],
    },
    securitySchemes: schemes,
    securityRequirements: Object.keys(schemes).map((name) => ({ schemes: { [name]: { list: [] } } })),
    // Files come as parts with `raw` bytes (or a data URL), stored as a message's files.
    defaultInputModes: ["text/plain", "application/json", ...FILE_TYPES.filter((type) => type !== "text/plain")],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: agents.map((agent) => ({
      id: agent.name,
      name: agent.name,
      description: agent.description || agent.name,
      tags: [agent === network.entry ? "entry" : "handoff-target"],
    })),
  };
}
