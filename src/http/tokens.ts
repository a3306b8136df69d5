/**
 * Conversation tokens: `<id>.<grant>.<HMAC-SHA256(secret, id and grant)>`, base64url. A token
 * grants one conversation, so a browser never holds the master key; the grant is the
 * conversation's own (kept in its Durable Object), so deleting the conversation revokes it.
 */
const encoder = new TextEncoder();

async function mac(secret: string, conversationId: string, grant: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`conversation:${conversationId}:${grant}`)));
  return btoa(String.fromCharCode(...signature))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

export async function mintToken(secret: string, conversationId: string, grant: string): Promise<string> {
  return `${conversationId}.${grant}.${await mac(secret, conversationId, grant)}`;
}

/**
 * The conversation and grant a token names, or null when it is not a token signed with this
 * secret. Whether the grant is still the conversation's is for its Durable Object to say.
 */
export async function verifyToken(secret: string, token: string): Promise<{ conversationId: string; grant: string } | null> {
  const [conversationId, grant, signature, ...rest] = token.split(".");
  if (!conversationId || !grant || !signature || rest.length > 0) return null;
  return (await safeEqual(signature, await mac(secret, conversationId, grant))) ? { conversationId, grant } : null;
}

/** Compares in constant time: both sides are hashed to equal lengths first. */
export async function safeEqual(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([a, b].map((s) => crypto.subtle.digest("SHA-256", encoder.encode(s))));
  return crypto.subtle.timingSafeEqual(x!, y!);
}
