/**
 * Conversation tokens: `<id>.<HMAC-SHA256(secret, id)>`, base64url. A token grants one
 * conversation, so a browser never holds the master key.
 */
const encoder = new TextEncoder();

async function mac(secret: string, conversationId: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signature = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`conversation:${conversationId}`)));
  return btoa(String.fromCharCode(...signature)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export async function mintToken(secret: string, conversationId: string): Promise<string> {
  return `${conversationId}.${await mac(secret, conversationId)}`;
}

/** The conversation a token grants, or null when it is not a token signed with this secret. */
export async function verifyToken(secret: string, token: string): Promise<string | null> {
  const dot = token.lastIndexOf(".");
  if (dot <= 0) return null;
  const conversationId = token.slice(0, dot);
  return (await safeEqual(token.slice(dot + 1), await mac(secret, conversationId))) ? conversationId : null;
}

/** Compares in constant time: both sides are hashed to equal lengths first. */
export async function safeEqual(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([a, b].map((s) => crypto.subtle.digest("SHA-256", encoder.encode(s))));
  return crypto.subtle.timingSafeEqual(x!, y!);
}
