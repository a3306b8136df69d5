import { timingSafeEqual } from "node:crypto";

/**
 * workerd's one non-standard Web Crypto method, for the Node tests of the HTTP app (the API key and
 * conversation tokens are compared with it). Same contract: equal lengths, else it throws.
 */
const subtle = crypto.subtle as SubtleCrypto & { timingSafeEqual?: (a: ArrayBuffer, b: ArrayBuffer) => boolean };
subtle.timingSafeEqual ??= (a, b) => timingSafeEqual(new Uint8Array(a), new Uint8Array(b));
