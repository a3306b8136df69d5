/**
 * Conversation tokens: `<id>.<grant>.<HMAC-SHA256(secret, id and grant)>`, base64url. A token
 * grants one conversation, so a browser never holds the master key; the grant is the
 * conversation's own (kept in its Durable Object), so deleting the conversation revokes it.
 */
import { safeEqual, signature } from "../conversation/files/file-links.ts";

function mac(secret: string, conversationId: string, grant: string): Promise<string> {
  return signature(secret, `conversation:${conversationId}:${grant}`);
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

export { safeEqual };
