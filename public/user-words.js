// What the pages tell a person when the Worker refuses something: words for the person at the
// page, not the API's (which name routes and variables). The API's code stays on the line, for
// whoever runs the Worker, in its title.

const FOR_USERS = {
  request_pending: "Approve or deny the request above first: the agent waits for your decision before it reads a new message.",
  run_in_progress: "The agent is still answering your last message. Wait for it, or press Stop.",
  rate_limited: "You are sending messages too fast. Wait a moment, then send again.",
  user_budget_exhausted: "You have used today's allowance for this chat. Come back tomorrow.",
  message_too_long: "That message is too long. Shorten it and send it again.",
  too_many_streams: "This conversation is open in too many tabs. Close some of them and try again.",
  unauthorized: "Your sign-in has expired. Reload the page to sign in again.",
  token_revoked: "Your sign-in has expired. Reload the page to sign in again.",
  conversation_not_found: "This conversation no longer exists. Start a new one.",
  internal_error: "Something went wrong on our side. Try again in a moment.",
  file_too_large: "That file is too large to send. Send a smaller one.",
  conversation_files_full: "This conversation holds all the files it can. Start a new conversation to send more.",
  too_many_files: "That is more files than one message can carry. Send them over a few messages.",
  unsupported_media_type: "That kind of file cannot be sent here. Send a photo (PNG, JPEG, WebP or GIF), a PDF or a text file.",
  invalid_file: "That file could not be read. Try another.",
  files_not_configured: "This chat does not take files. Describe it in words instead.",
};

/** A refusal or a turn's error, as the person at the page reads it. */
export function forUsers(code, message) {
  return FOR_USERS[code] ?? `Sorry, that did not work: ${message}`;
}

/**
 * Why the page cannot start, from the Worker's answer to its first request: its own message, and
 * what whoever runs the Worker should configure.
 */
export function cannotStart(status, error) {
  const said = error?.message ?? `HTTP ${status}`;
  if (error?.code === "auth_not_configured")
    return `This chat cannot start: ${said} For a local run, put ALLOW_ANONYMOUS=true in .dev.vars; deployed, set API_KEY and a sign-in provider.`;
  if (status === 401 || status === 403)
    return `This Worker needs a sign-in: ${said} Whoever runs it configures an identity provider (AUTH_JWKS_URL or AUTH_JWT_SECRET), then people sign in here.`;
  return `This chat cannot start: ${said}`;
}

/** A conversation's status in the words the sidebar and the chat use: one set, never the API's. */
export function statusWords(status) {
  return (
    {
      idle: "ready",
      running: "answering",
      completed: "answered",
      awaiting_approval: "waiting for your approval",
      awaiting_input: "waiting for your answer",
      awaiting_human: "waiting for a person",
      failed: "stopped by an error",
      cancelled: "stopped",
      interrupted: "interrupted",
    }[status] ?? status.replaceAll("_", " ")
  );
}

/** An agent's name as a person reads it: "parcel-search" is "Parcel search". */
export function agentName(name) {
  const spaced = String(name).replace(/[-_]+/g, " ").trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}
