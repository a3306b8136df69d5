import type { Hono } from "hono";
import { deskOf } from "../desk/operator-desk.ts";
import type { AppEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { expectOk, readQuery } from "./request.ts";
import { conversationIdOf, DeskQuery, PageParams } from "./schemas.ts";
import { conversationClient } from "./conversation-client.ts";
import { fileResponse } from "./file-routes.ts";

/**
 * The operator desk: conversations handed to a person (`waiting`) or held by one (`held`), and one
 * of them read whole. Answering and handing back are under /v1/conversations/:id/operator/.
 */
export function registerOperatorRoutes(app: Hono<AppEnv>): void {
  app.get("/v1/operator/conversations", async (c) => {
    const { status } = readQuery(c, DeskQuery);
    const desk = deskOf(c.env);
    if (!desk)
      throw new HttpError(
        "operator_desk_not_configured",
        "This Worker binds no operator desk: add the OPERATOR_DESK Durable Object binding (class OperatorDesk) to wrangler.toml.",
      );
    return c.json({ conversations: await desk.list(status) });
  });

  app.get("/v1/operator/conversations/:id", async (c) => {
    const client = conversationClient(c.env, conversationIdOf(c.req.param("id")), c.get("access"));
    // The desk's reader sees what was written for the agents too: a hand-back's note, the system messages.
    return c.json(await expectOk(client.getView(readQuery(c, PageParams), "desk")));
  });

  // What the customer's agents remember of them, read-only, while a person holds the conversation.
  app.get("/v1/operator/conversations/:id/memory", async (c) => {
    const client = conversationClient(c.env, conversationIdOf(c.req.param("id")), c.get("access"));
    return c.json({ memories: await expectOk(client.ownerMemories()) });
  });

  // The customer's files, for the desk while a person holds the conversation (or it waits for one).
  app.get("/v1/operator/conversations/:id/files/:fileId", (c) =>
    fileResponse(c.env, conversationClient(c.env, conversationIdOf(c.req.param("id")), c.get("access")), c.req.param("fileId")),
  );
}
