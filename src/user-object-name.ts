/**
 * A signed-in user's own objects (their inbox, their memory) are named by a hash of their id: any characters an identity
 * provider uses are fine, and the name says nothing of who it is.
 */
export async function userObjectName(userId: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`user:${userId}`)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}
