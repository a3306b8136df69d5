/**
 * AG-UI's multimodal user content as the one file shape: `image` and `document` parts (their
 * source's base64 `data`, a data URL, or a `file` source naming an upload's id), and the older
 * `binary` part (`data`, or a data URL). A URL elsewhere is refused: the Worker fetches no address
 * a client names.
 */
import { HttpError } from "../errors.ts";
import type { FileInput } from "../schemas.ts";

type Part = Record<string, unknown>;

const text = (value: unknown) => (typeof value === "string" ? value : undefined);

/** The files of a user message's content parts, in order. */
export function agUiFiles(content: unknown): FileInput[] {
  return Array.isArray(content) ? (content as Part[]).flatMap(fileOf) : [];
}

function fileOf(part: Part): FileInput[] {
  if (part.type === "binary") return [fromBytes(text(part.data), text(part.url), text(part.mimeType), text(part.filename))];
  if (part.type !== "image" && part.type !== "document") return [];
  const source = (part.source ?? {}) as Part;
  const name = text((part.metadata as Part | undefined)?.filename);
  if (source.type === "file") return [{ fileId: text(source.value) ?? "" }];
  if (source.type === "data") return [fromBytes(text(source.value), undefined, text(source.mimeType), name)];
  if (source.type === "url") return [fromBytes(undefined, text(source.value), text(source.mimeType), name)];
  throw new HttpError(
    "invalid_file",
    "An image or document part's `source` is `data` (base64), `url` (a data URL) or `file` (an upload's id).",
  );
}

function fromBytes(data: string | undefined, url: string | undefined, mimeType: string | undefined, name: string | undefined): FileInput {
  const named = name ? { name } : {};
  if (data !== undefined) return { url: `data:${mimeType ?? ""};base64,${data}`, ...named };
  if (url?.startsWith("data:")) return { url, ...(mimeType ? { mediaType: mimeType } : {}), ...named };
  throw new HttpError("invalid_file", "A file part carries its bytes (base64 `data`) or a data URL; upload other files to …/files first.");
}
