/**
 * @module
 * The HTTP layer: Hono routes, request validation and the mapping of error codes to statuses.
 */
export { createApp } from "./app.ts";
export { errorResponse, type ErrorBody, type HttpErrorCode } from "./errors.ts";
