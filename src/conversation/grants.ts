/**
 * A conversation's token grant: bound into every token's signature, kept in the conversation's
 * object, so a new one (a rotation, or the conversation deleted) revokes every token issued before.
 */
/** A random grant: 128 bits, base64url. */
export function newGrant(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}
