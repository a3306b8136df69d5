/** A2A as the package offers it: its paths, named even where a Worker does not serve it (they answer how to). */
import type { ProtocolOffer } from "../../http/protocols.ts";

export const A2A_CARD_PATH = "/.well-known/agent-card.json";
export const A2A_RPC_PATH = "/v1/a2a";

export const A2A_OFFER: ProtocolOffer = { name: "a2a", paths: [A2A_CARD_PATH, A2A_RPC_PATH], said: "A2A", option: "a2a()" };
