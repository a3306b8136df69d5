/**
 * Who is signed in (GET /v1/me), and the development sign-in of `npm start` (POST /v1/dev/sign-in):
 * pick a name, and whether you are an operator, and the Worker signs a short-lived token with a key
 * it made for this run. On only with DEV_SIGN_IN and ALLOW_ANONYMOUS and no identity provider, so a
 * deployment that does not ask for it never mints tokens of its own.
 */
import type { Hono } from "hono";
import { SignJWT } from "jose";
import { readConfig } from "../config.ts";
import type { AppEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { readJson } from "./request.ts";
import { DevSignInBody } from "./schemas.ts";
import { DEV_ISSUER, devSignInEnabled, devSigningKey, usersConfigured } from "./user-tokens.ts";

/** Development tokens last an hour: the page signs in again, under the same name, when one has expired. */
const DEV_TOKEN_SECONDS = 60 * 60;

export function registerSignInRoutes(app: Hono<AppEnv>): void {
  app.get("/v1/me", (c) => {
    const access = c.get("access");
    const config = readConfig(c.env);
    const signIn = usersConfigured(config) ? "provider" : devSignInEnabled(config) ? "development" : null;
    // A signed-in operator is a user here: the operator access is given on the operator API's paths only.
    const user = access.kind === "user" ? access.user : null;
    return c.json({ access: access.kind, user, signIn });
  });

  app.post("/v1/dev/sign-in", async (c) => {
    const config = readConfig(c.env);
    if (!devSignInEnabled(config))
      throw new HttpError(
        "not_found",
        "The development sign-in is on only with DEV_SIGN_IN=true and ALLOW_ANONYMOUS=true " +
          "(in .dev.vars or on the wrangler dev command line, as `npm start` does) and no identity provider configured.",
      );
    const { name, operator } = await readJson(c, DevSignInBody);
    const expiresAt = Math.floor(Date.now() / 1000) + DEV_TOKEN_SECONDS;
    // The same name is the same user across sign-ins of a run: their inbox is found again.
    const id = `dev:${name.toLowerCase()}`;
    const roles = operator ? [config.AUTH_OPERATOR_ROLE] : [];
    const token = await new SignJWT({ [config.AUTH_USER_CLAIM]: id, [config.AUTH_NAME_CLAIM]: name, [config.AUTH_ROLES_CLAIM]: roles })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setIssuer(DEV_ISSUER)
      .setIssuedAt()
      .setExpirationTime(expiresAt)
      .sign(devSigningKey());
    return c.json({ token, user: { id, name, roles }, expiresAt: new Date(expiresAt * 1000).toISOString() }, 201);
  });
}
