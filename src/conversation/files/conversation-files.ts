/**
 * A conversation's files: checked before anything is stored, their bytes in the FILES bucket and a
 * reference row in the conversation's storage, read back for the model and the tools (the
 * `FilePort`), shared with forks, let go of when the conversation is erased, and swept when an
 * upload was never sent in a message.
 */
import { RuntimeError } from "../../runtime/errors.ts";
import { type FileRef, filesOfHistory, type Message } from "../../runtime/messages.ts";
import type { FilePort, NewFile } from "../../runtime/ports/files-port.ts";
import type { Redactor } from "../../runtime/redact.ts";
import type { FileLedger } from "../storage/file-ledger.ts";
import { type ConversationResult, fail, ok } from "../results.ts";
import { FileBytes } from "./file-bytes.ts";
import { checkFiles, type FileLimits, type IncomingFile, sha256 } from "./file-checks.ts";
import { fileLink } from "./file-links.ts";

/** What an instance keeps of the bytes it just stored, for the leg that reads them next. */
const JUST_STORED_BYTES = 16 * 1024 * 1024;

export interface FilesSetup {
  ledger: FileLedger;
  bucket: R2Bucket | undefined;
  limits: FileLimits;
  /** A file's name is user input: a configured secret typed into it is redacted before it is stored. */
  redactor: Redactor;
  /** The conversation that holds the files it stores. */
  conversationId: () => string;
  /** How long an upload may wait for the message that sends it before it is swept (FILE_ORPHAN_AFTER, an hour by default). */
  keptMs: number;
  /** Where images are sent as links (FILES_SENT_AS=url): the secret that signs them and the Worker's public origin. */
  links?: { secret: string; origin: string } | undefined;
}

export class ConversationFiles implements FilePort {
  readonly #ledger: FileLedger;
  readonly #bytes: FileBytes | null;
  readonly #limits: FileLimits;
  readonly #redactor: Redactor;
  readonly #conversationId: () => string;
  /** How long an upload may wait for the message that sends it before it is swept. */
  readonly keptMs: number;
  readonly #links: { secret: string; origin: string } | undefined;
  /**
   * Bytes stored by this instance and not read since, at most JUST_STORED_BYTES: the leg that sends an upload reads it
   * next, and takes it from here rather than from the bucket it was just written to.
   */
  readonly #justStored = new Map<string, Uint8Array>();
  #justStoredBytes = 0;

  constructor(setup: FilesSetup) {
    this.#ledger = setup.ledger;
    this.#bytes = setup.bucket ? new FileBytes(setup.bucket) : null;
    this.#limits = setup.limits;
    this.#redactor = setup.redactor;
    this.#conversationId = setup.conversationId;
    this.keptMs = setup.keptMs;
    this.#links = setup.links;
  }

  /** A signed link to an image, open FILE_LINK_MS, where images are sent as links; undefined where they are sent inline. */
  async linkTo(file: FileRef): Promise<string | undefined> {
    if (!this.#links || !file.mediaType.startsWith("image/")) return undefined;
    return fileLink(this.#links.secret, this.#links.origin, this.#conversationId(), file.id);
  }

  /** Why files cannot be taken at all here (no FILES binding), or null. */
  unavailable(): ConversationResult<never> | null {
    return this.#bytes
      ? null
      : fail("files_not_configured", "This Worker binds no FILES (an R2 bucket for the conversations' files): bind it in wrangler.toml.");
  }

  /** Checks the files, then stores them: each one's reference row, then its bytes. Nothing is stored when a check fails. */
  async store(incoming: readonly IncomingFile[]): Promise<ConversationResult<FileRef[]>> {
    const unavailable = this.unavailable();
    if (unavailable) return unavailable;
    const checked = checkFiles(incoming, this.#limits, this.#ledger.storedBytes());
    if (!checked.ok) return checked;
    const refs = await Promise.all(
      checked.value.map(async (file) => ({
        id: crypto.randomUUID(),
        name: this.#redactor.text(file.name),
        mediaType: file.mediaType,
        size: file.bytes.byteLength,
        sha256: await sha256(file.bytes),
      })),
    );
    // The rows first: bytes stored before their row would be an object nothing here knows of, should the object die between.
    this.#ledger.add(refs);
    await Promise.all(refs.map((ref, i) => this.#bytes!.put(ref, checked.value[i]!.bytes, this.#conversationId())));
    refs.forEach((ref, i) => this.#keepJustStored(ref.id, checked.value[i]!.bytes));
    return ok(refs);
  }

  #keepJustStored(id: string, bytes: Uint8Array): void {
    if (bytes.byteLength > JUST_STORED_BYTES) return;
    // The oldest go first: an upload no message sent is read from the bucket, should it ever be sent.
    for (const [old, kept] of this.#justStored) {
      if (this.#justStoredBytes + bytes.byteLength <= JUST_STORED_BYTES) break;
      this.#forgetJustStored(old, kept);
    }
    this.#justStored.set(id, bytes);
    this.#justStoredBytes += bytes.byteLength;
  }

  #forgetJustStored(id: string, bytes = this.#justStored.get(id)): void {
    if (!bytes) return;
    this.#justStored.delete(id);
    this.#justStoredBytes -= bytes.byteLength;
  }

  /** A file a tool made, checked and stored as a user's; a refusal is the tool's error. */
  async save(file: NewFile): Promise<FileRef> {
    const stored = await this.store([file]);
    if (!stored.ok)
      throw new RuntimeError(stored.error.code === "files_not_configured" ? "file_not_found" : "internal_error", stored.error.message);
    return stored.value[0]!;
  }

  /** The references of files stored here, by id: a message may send only those. */
  references(ids: readonly string[]): ConversationResult<FileRef[]> {
    const refs: FileRef[] = [];
    for (const id of ids) {
      const ref = this.#ledger.get(id);
      if (!ref) return fail("file_not_found", `No file '${id}' was uploaded to this conversation: upload it first, then send its id.`);
      refs.push(ref);
    }
    if (refs.length > this.#limits.perMessage)
      return fail("too_many_files", `A message carries at most ${this.#limits.perMessage} files; this one has ${refs.length}.`);
    return ok(refs);
  }

  /** A file of this conversation's, by id. */
  get(id: string): FileRef | undefined {
    return this.#ledger.get(id);
  }

  /** A file's bytes: those this instance just stored once, else the bucket's (a leg's port keeps them for its steps). */
  async read(file: FileRef): Promise<Uint8Array> {
    const fresh = this.#justStored.get(file.id);
    this.#forgetJustStored(file.id, fresh);
    const bytes = this.#ledger.get(file.id) && (fresh ?? (await this.#bytes?.read(file.id)));
    if (!bytes) throw new RuntimeError("file_not_found", `The file '${file.name}' (${file.id}) is not stored.`);
    return bytes;
  }

  /** Lets go of files (an upload refused with its message, an orphan, the erased conversation's). */
  async release(refs: readonly FileRef[]): Promise<void> {
    for (const ref of refs) this.#forgetJustStored(ref.id);
    // The bytes before the rows: should this stop between (R2 failing, the object evicted), the rows are still there for
    // the next sweep to let go of, never bytes that no row names.
    await Promise.all(refs.map((ref) => this.#bytes?.release(ref.id, this.#conversationId())));
    this.#ledger.remove(refs.map((ref) => ref.id));
  }

  /** Every file of the conversation let go of: it is being erased. */
  releaseAll(): Promise<void> {
    return this.release(this.#ledger.all());
  }

  /** A fork holds the files its history refers to, from now on (asked of the original, before it hands out the snapshot). */
  async shareWith(forkId: string, refs: readonly FileRef[]): Promise<void> {
    await Promise.all(refs.map((ref) => this.#bytes?.hold(ref.id, forkId)));
  }

  /** A fork's files, as the original shared them. */
  adopt(refs: readonly FileRef[]): void {
    this.#ledger.add(refs);
  }

  /**
   * Uploads no message came to send within `keptMs` are let go of (their bytes too); answers when the next such
   * sweep is due, or null when nothing waits for one.
   */
  async sweep(history: readonly Message[], now = Date.now()): Promise<number | null> {
    const sent = sentFileIds(history);
    await this.release(this.#ledger.orphans(sent, now - this.keptMs));
    const oldest = this.#ledger.oldestUnkept(sent);
    return oldest === null ? null : oldest + this.keptMs;
  }
}

/** The ids of the files a history's messages carry (the user's, and those tools saved). */
export function sentFileIds(history: readonly Message[]): Set<string> {
  return new Set(filesOfHistory(history).map((file) => file.id));
}
