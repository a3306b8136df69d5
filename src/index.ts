/**
 * @module
 * The Worker: the HTTP API over one Conversation Durable Object per conversation.
 */
import { createSupportNetwork } from "./agents/network.ts";
import { createApp } from "./http/index.ts";

export { Conversation } from "./session/index.ts";

export default createApp(createSupportNetwork());
