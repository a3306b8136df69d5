// The signed-in user's conversations, in the chat page's sidebar: GET /v1/conversations (newest
// first; ?q= searches titles and messages), switch by clicking one, rename (PATCH title) and
// delete (DELETE) from its row.

import { statusWords } from "/user-words.js";

/**
 * `refresh()` redraws the list and answers its entries.
 * `api(path, init)` answers the parsed JSON body (null for 204) or throws; `open(id)` switches to
 * a conversation; `current()` is the id on show; `gone(id)` is told a deleted one.
 */
export function inboxPanel({ list, search, api, open, current, gone }) {
  let query = "";
  let timer;
  // The row being renamed survives a refresh (a search settling, a turn's title arriving), so the form
  // someone is typing in is not taken away under them.
  let editing = null;

  async function refresh() {
    const path = query ? `/v1/conversations?limit=50&q=${encodeURIComponent(query)}` : "/v1/conversations?limit=50";
    const { conversations } = await api(path);
    list.replaceChildren(...conversations.map(row));
    if (!conversations.length)
      list.append(
        Object.assign(document.createElement("li"), { className: "empty", textContent: query ? "No match." : "No conversations yet." }),
      );
    return conversations;
  }

  function row(entry) {
    if (editing?.id === entry.id) return editing.li;
    const li = document.createElement("li");
    li.dataset.conversation = entry.id;
    const pick = Object.assign(document.createElement("button"), { type: "button", className: "pick" });
    pick.setAttribute("aria-current", String(entry.id === current()));
    const title = Object.assign(document.createElement("span"), { className: "title", textContent: entry.title });
    const meta = Object.assign(document.createElement("span"), {
      className: "meta",
      textContent: `${entry.holder} · ${label(entry.status)}`,
    });
    const snippet = Object.assign(document.createElement("span"), { className: "snippet", textContent: entry.snippet });
    pick.append(title, meta, snippet);
    pick.addEventListener("click", () => open(entry.id));
    const rename = Object.assign(document.createElement("button"), { type: "button", className: "rename", textContent: "Rename" });
    rename.setAttribute("aria-label", `Rename ${entry.title}`);
    rename.addEventListener("click", () => renameInPlace(li, entry));
    const remove = Object.assign(document.createElement("button"), { type: "button", className: "delete", textContent: "Delete" });
    remove.setAttribute("aria-label", `Delete ${entry.title}`);
    remove.addEventListener("click", async () => {
      if (!confirm(`Delete "${entry.title}"? Its messages are deleted for good, and links to it stop working.`)) return;
      await api(`/v1/conversations/${entry.id}`, { method: "DELETE" });
      await gone(entry.id);
      await refresh();
    });
    li.append(pick, rename, remove);
    return li;
  }

  function renameInPlace(li, entry) {
    editing = { id: entry.id, li };
    const form = Object.assign(document.createElement("form"), { className: "rename-form" });
    const input = Object.assign(document.createElement("input"), { value: entry.title, maxLength: 120, required: true });
    input.setAttribute("aria-label", "New title");
    form.append(input, Object.assign(document.createElement("button"), { type: "submit", textContent: "Save" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        await api(`/v1/conversations/${entry.id}`, {
          method: "PATCH",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ title: input.value.trim() }),
        });
      } catch (error) {
        // The Worker's message says what to fix (an empty title, say); the form stays to fix it in.
        input.setCustomValidity(error.message);
        input.reportValidity();
        return;
      }
      editing = null;
      await refresh();
    });
    input.addEventListener("input", () => input.setCustomValidity(""));
    input.addEventListener("keydown", (event) => {
      if (event.key !== "Escape") return;
      editing = null;
      refresh().catch(() => {});
    });
    li.replaceChildren(form);
    input.select();
  }

  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      query = search.value.trim();
      refresh().catch(() => {});
    }, 200);
  });

  return { refresh };
}

function label(status) {
  return statusWords(status);
}
