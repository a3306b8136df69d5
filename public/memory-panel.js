// "What I remember": the signed-in user's memory across conversations (GET, PATCH and DELETE /v1/me/memory), listed
// newest first with where each came from, corrected in place, forgotten one by one or all at once. What is forgotten
// is not recalled into any later turn.

const TYPES = ["fact", "preference", "event", "instruction", "task"];

/** The panel in `section`; `request(path, init)` sends with the user's sign-in. */
export function memoryPanel(section, request) {
  const list = section.querySelector("[data-memory-list]");
  const status = section.querySelector("[data-memory-status]");
  const forgetAll = section.querySelector("[data-forget-all]");

  async function call(path, init = {}) {
    const response = await request(path, init);
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
    return body;
  }

  async function refresh() {
    status.textContent = "Loading…";
    try {
      const { memories } = await call("/v1/me/memory");
      list.replaceChildren(...memories.map(row));
      status.textContent = memories.length
        ? `${memories.length} ${memories.length === 1 ? "thing" : "things"} the agents remember of you, in every conversation.`
        : "Nothing yet. What you ask an agent to remember, and what a conversation says of you, shows here.";
      forgetAll.hidden = memories.length === 0;
    } catch (error) {
      status.textContent = `Your memory could not be read: ${error.message}`;
    }
  }

  /** One memory: its words (editable), its kind, where it came from, and Forget. */
  function row(memory) {
    const item = document.createElement("li");
    item.dataset.memory = memory.id;
    const words = Object.assign(document.createElement("input"), { value: memory.text, maxLength: 4000 });
    words.setAttribute("aria-label", "What is remembered");
    const kind = document.createElement("select");
    kind.setAttribute("aria-label", "Kind");
    kind.append(
      ...TYPES.map((t) => Object.assign(document.createElement("option"), { value: t, textContent: t, selected: t === memory.type })),
    );
    const from = Object.assign(document.createElement("small"), { textContent: origin(memory) });
    const save = Object.assign(document.createElement("button"), { type: "button", textContent: "Save", hidden: true });
    const forget = Object.assign(document.createElement("button"), { type: "button", textContent: "Forget" });
    const changed = () => {
      save.hidden = words.value.trim() === memory.text && kind.value === memory.type;
    };
    words.addEventListener("input", changed);
    kind.addEventListener("change", changed);
    save.addEventListener("click", () =>
      act(`/v1/me/memory/${memory.id}`, { method: "PATCH", body: { text: words.value.trim(), type: kind.value } }),
    );
    forget.addEventListener("click", () => act(`/v1/me/memory/${memory.id}`, { method: "DELETE" }));
    item.append(words, kind, save, forget, from);
    return item;
  }

  async function act(path, { method, body }) {
    try {
      await call(path, { method, ...(body ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) } : {}) });
      await refresh();
    } catch (error) {
      status.textContent = error.message;
    }
  }

  forgetAll.addEventListener("click", () => {
    if (confirm("Forget everything the agents remember of you?")) act("/v1/me/memory", { method: "DELETE" });
  });
  return { refresh };
}

/** Where a memory came from, in words: when, and whether an agent was asked or a conversation was read for it. */
function origin(memory) {
  const when = memory.createdAt ? new Date(memory.createdAt).toLocaleDateString() : "";
  const how =
    memory.source?.agent === "memory-extraction" ? "from a conversation" : memory.source?.agent ? `kept by ${memory.source.agent}` : "";
  return [how, when].filter(Boolean).join(", ");
}
