/**
 * Files on the chat page: what the user picks (the attach button), pastes or drops waits in a tray above the composer;
 * on send each is uploaded (`POST …/files`, with a progress bar for a large one) and the message carries their ids.
 * Files in the log are thumbnails (an image, opened large on a click) or a named link, read with the page's credential.
 */

/** What the Worker takes (it checks the bytes themselves); the picker offers these. */
export const ACCEPTED = "image/png,image/jpeg,image/webp,image/gif,application/pdf,text/plain";
/** Past this size an upload shows its progress. */
const SHOWS_PROGRESS = 256 * 1024;

/**
 * The tray of files waiting to be sent, wired to the attach button, the message box (paste) and `dropZone` (drag and
 * drop). `changed` is told when the tray fills or empties (Send then needs no words).
 */
export function attachmentTray({ tray, picker, button, input, dropZone, changed }) {
  let waiting = [];
  const draw = () => {
    tray.replaceChildren(
      ...waiting.map((file, i) => {
        const chip = document.createElement("span");
        chip.className = "chip";
        chip.dataset.testid = "pending-file";
        if (file.type.startsWith("image/")) chip.append(thumbnail(URL.createObjectURL(file), file.name));
        const name = document.createElement("span");
        name.textContent = file.name || "pasted image";
        const remove = document.createElement("button");
        remove.type = "button";
        remove.textContent = "×";
        remove.setAttribute("aria-label", `Remove ${file.name || "the file"}`);
        remove.addEventListener("click", () => {
          waiting = waiting.filter((_, j) => j !== i);
          draw();
        });
        chip.append(name, remove);
        return chip;
      }),
    );
    tray.hidden = waiting.length === 0;
    changed();
  };
  const add = (files) => {
    waiting = [...waiting, ...[...files].filter((file) => file.size > 0)];
    draw();
  };
  button.addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    add(picker.files ?? []);
    picker.value = "";
  });
  input.addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files ?? [])];
    if (!files.length) return;
    event.preventDefault();
    add(files);
  });
  dropZone.addEventListener("dragover", (event) => {
    if (![...(event.dataTransfer?.types ?? [])].includes("Files")) return;
    event.preventDefault();
    dropZone.classList.add("dropping");
  });
  dropZone.addEventListener("dragleave", () => dropZone.classList.remove("dropping"));
  dropZone.addEventListener("drop", (event) => {
    event.preventDefault();
    dropZone.classList.remove("dropping");
    add(event.dataTransfer?.files ?? []);
  });
  return {
    /** The files waiting, and the tray emptied. */
    take() {
      const taken = waiting;
      waiting = [];
      draw();
      return taken;
    },
    get count() {
      return waiting.length;
    },
  };
}

/**
 * Uploads the files to the conversation, one after another, with a progress bar in `where` for a large one: their
 * references, or the first refusal (its error body) thrown.
 */
export async function uploadAll(files, { conversationId, headers, where }) {
  const refs = [];
  for (const file of files) refs.push(await upload(file, conversationId, headers, where));
  return refs;
}

function upload(file, conversationId, headers, where) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    const name = file.name || `pasted.${(file.type.split("/")[1] ?? "bin").replace("jpeg", "jpg")}`;
    request.open("POST", `/v1/conversations/${conversationId}/files?name=${encodeURIComponent(name)}`);
    for (const [key, value] of Object.entries(headers({ "content-type": file.type || "application/octet-stream" })))
      request.setRequestHeader(key, value);
    let bar = null;
    if (file.size > SHOWS_PROGRESS) {
      bar = document.createElement("progress");
      bar.max = file.size;
      bar.value = 0;
      bar.dataset.testid = "upload-progress";
      bar.setAttribute("aria-label", `Uploading ${name}`);
      where.append(bar);
      request.upload.addEventListener("progress", (event) => (bar.value = event.loaded));
    }
    request.addEventListener("load", () => {
      bar?.remove();
      const body = JSON.parse(request.responseText || "{}");
      if (request.status === 201) resolve(body.file);
      else reject(Object.assign(new Error(body.error?.message ?? `The upload answered ${request.status}.`), { code: body.error?.code }));
    });
    request.addEventListener("error", () => {
      bar?.remove();
      reject(new Error("The upload did not reach the server."));
    });
    request.send(file);
  });
}

/**
 * The files of a message or a tool's result, as the log shows them: images as thumbnails (read with the page's
 * credential, then opened large on a click), anything else as a link that downloads it.
 */
export function fileList(files, { fileUrl, headers }) {
  const list = document.createElement("div");
  list.className = "files";
  for (const file of files) {
    const item = document.createElement(file.mediaType.startsWith("image/") ? "button" : "a");
    item.className = "file";
    item.dataset.testid = "file";
    item.title = file.name;
    const read = () => readOnce(fileUrl(file), headers);
    if (file.mediaType.startsWith("image/")) {
      item.type = "button";
      item.setAttribute("aria-label", `Open ${file.name}`);
      const image = thumbnail("", file.name);
      item.append(image);
      read()
        .then((blob) => (image.src = URL.createObjectURL(blob)))
        .catch(() => (image.alt = `${file.name} (could not be read)`));
      item.addEventListener("click", () => enlarge(image.src, file.name));
    } else {
      item.href = "#";
      item.textContent = `${file.name} (${readableSize(file.size)})`;
      item.addEventListener("click", async (event) => {
        event.preventDefault();
        const link = document.createElement("a");
        link.href = URL.createObjectURL(await read());
        link.download = file.name;
        link.click();
      });
    }
    list.append(item);
  }
  return list;
}

/** Files already read, by URL: a page that redraws its log (the desk polls) reads each file once. */
const reads = new Map();
function readOnce(url, headers) {
  if (!reads.has(url))
    reads.set(
      url,
      fetch(url, { headers: headers() }).then((res) => (res.ok ? res.blob() : Promise.reject(new Error(`HTTP ${res.status}`)))),
    );
  const read = reads.get(url);
  read.catch(() => reads.delete(url));
  return read;
}

function thumbnail(src, name) {
  const image = document.createElement("img");
  image.className = "thumb";
  image.alt = name;
  if (src) image.src = src;
  return image;
}

/** An image opened large over the page; a click or Escape closes it. */
function enlarge(src, name) {
  const dialog = document.createElement("dialog");
  dialog.className = "lightbox";
  dialog.dataset.testid = "lightbox";
  const image = document.createElement("img");
  image.src = src;
  image.alt = name;
  dialog.append(image);
  dialog.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

function readableSize(bytes) {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
