// Who is signed in, for the chat page and the operator desk: the sign-in token kept in
// localStorage, GET /v1/me to learn who it names, and the development sign-in of `npm start`
// (a name and an operator box; the Worker signs a one-hour token). An expired development token
// is replaced silently by signing in again under the same name.

const ACCOUNT_KEY = "handoff-account";

function remembered() {
  return JSON.parse(localStorage.getItem(ACCOUNT_KEY) ?? "null");
}

async function me(token) {
  const response = await fetch("/v1/me", { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return response.ok ? response.json() : { access: null, user: null, signIn: response.status === 401 ? "provider" : null };
}

async function devSignIn(name, operator) {
  const response = await fetch("/v1/dev/sign-in", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, operator }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
  localStorage.setItem(ACCOUNT_KEY, JSON.stringify({ token: body.token, name, operator }));
  return body.token;
}

/**
 * Loads who is signed in: { user, token, signIn } where `signIn` is "development", "provider" or
 * null (no sign-in on this Worker). A remembered development sign-in whose token the Worker no
 * longer takes (expired, or a new dev run with a new key) is renewed under the same name.
 */
export async function loadAccount() {
  const saved = remembered();
  let who = await me(saved?.token);
  if (saved && who.access === null && saved.name) {
    const token = await devSignIn(saved.name, saved.operator).catch(() => null);
    if (token) who = await me(token);
  }
  if (who.user === null && saved) localStorage.removeItem(ACCOUNT_KEY);
  return { user: who.user, token: who.user ? remembered()?.token : undefined, signIn: who.signIn };
}

/**
 * Draws the account box: who is signed in with Sign out, or the development sign-in form.
 * `signingIn()` is called as a sign-in starts (the page reloads once it is done) and returns what
 * undoes it if the sign-in is refused: the chat page holds its Send button meanwhile, since a
 * message sent then would be lost with the reload.
 */
export function drawAccount(box, account, { operatorByDefault = false, signingIn = () => () => {} } = {}) {
  box.replaceChildren();
  if (account.user) {
    const who = document.createElement("span");
    who.dataset.testid = "signed-in";
    const operator = account.user.roles.includes("operator") ? " (operator)" : "";
    who.textContent = `Signed in as ${account.user.name ?? account.user.id}${operator}`;
    box.append(who);
    if (remembered()) {
      const out = Object.assign(document.createElement("button"), { type: "button", textContent: "Sign out" });
      out.addEventListener("click", () => {
        localStorage.removeItem(ACCOUNT_KEY);
        location.reload();
      });
      box.append(" ", out);
    }
    return;
  }
  if (account.signIn !== "development") return;
  const form = document.createElement("form");
  form.className = "sign-in";
  form.innerHTML = `<span class="hint">Development sign-in</span>
    <input name="name" aria-label="Sign-in name" placeholder="Your name" required maxlength="40" />
    <label><input name="operator" type="checkbox" /> operator</label>
    <button type="submit">Sign in</button>`;
  form.elements.operator.checked = operatorByDefault;
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    const undo = signingIn();
    try {
      await devSignIn(form.elements.name.value.trim(), form.elements.operator.checked);
      location.reload();
    } catch (error) {
      form.querySelector(".hint").textContent = error.message;
      button.disabled = false;
      undo();
    }
  });
  box.append(form);
}
