/**
 * Short-lived links to a conversation's file, for a provider that fetches images by URL (FILES_SENT_AS=url): the file
 * route with `?expires=<ms>&signature=<HMAC-SHA256(secret, conversation, file, expires)>`, which opens that one file, with
 * no other credential, until it expires. Signed with the secret that signs conversation tokens.
 */
const encoder = new TextEncoder();

/** How long a link opens its file: long enough for a provider to fetch it while the step runs. */
export const FILE_LINK_MS = 15 * 60_000;

/** HMAC-SHA256 of `message` under `secret`, base64url: what conversation tokens and file links are signed with. */
export async function signature(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signed = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
  return btoa(String.fromCharCode(...signed))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

const linkMessage = (conversationId: string, fileId: string, expires: number) => `file:${conversationId}:${fileId}:${expires}`;

/** A link to the file on the Worker at `origin`, open until `now + FILE_LINK_MS`. */
export async function fileLink(secret: string, origin: string, conversationId: string, fileId: string, now = Date.now()): Promise<string> {
  const expires = now + FILE_LINK_MS;
  const signed = await signature(secret, linkMessage(conversationId, fileId, expires));
  const path = `/v1/conversations/${encodeURIComponent(conversationId)}/files/${encodeURIComponent(fileId)}`;
  return `${origin.replace(/\/$/, "")}${path}?expires=${expires}&signature=${signed}`;
}

/** Whether a link's `expires` and `signature` open this file now. */
export async function fileLinkOpens(
  secret: string,
  conversationId: string,
  fileId: string,
  expires: string | undefined,
  signed: string | undefined,
  now = Date.now(),
): Promise<boolean> {
  const until = Number(expires);
  if (!signed || !Number.isSafeInteger(until) || until < now || until > now + FILE_LINK_MS) return false;
  return safeEqual(signed, await signature(secret, linkMessage(conversationId, fileId, until)));
}

/** Compares in constant time: both sides are hashed to equal lengths first. */
export async function safeEqual(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([a, b].map((s) => crypto.subtle.digest("SHA-256", encoder.encode(s))));
  return crypto.subtle.timingSafeEqual(x!, y!);
}
