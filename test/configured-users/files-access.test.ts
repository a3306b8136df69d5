/**
 * Who may read a conversation's file, with its real id in hand: its owner, its token, the master
 * key, and an operator only while a person holds the conversation. Another user, an operator
 * otherwise, a forged token and nobody get nothing, and a file's id under another conversation's
 * path (one the caller owns) is not found: ids are no key to someone else's files.
 */
import { describe, expect, it } from "vitest";
import { MASTER, mint } from "../support/sign-in.ts";
import { scenario } from "../support/scenario.ts";
import { call } from "../support/worker.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
const bearer = (token: string | undefined): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

/** A conversation `owner` created, with a message that carried a PNG: its id, token and the file's id. */
async function withFile(owner: string, message: string): Promise<{ id: string; token: string; fileId: string }> {
  const created = (await (await call("/v1/conversations", { method: "POST", headers: bearer(owner) })).json()) as {
    id: string;
    token: string;
  };
  const url = `data:image/png;base64,${btoa(String.fromCharCode(...PNG))}`;
  const sent = await call(`/v1/conversations/${created.id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(owner) },
    body: JSON.stringify({ message, files: [{ url, name: "photo.png" }] }),
  });
  expect(sent.status).toBe(200);
  await sent.text();
  const view = (await (await call(`/v1/conversations/${created.id}`, { headers: bearer(owner) })).json()) as {
    files: Array<{ id: string }>;
  };
  return { ...created, fileId: view.files[0]!.id };
}

describe("reading a file by its id", () => {
  it("answers its owner, its token and the master key; no one else, whatever they know of it", async () => {
    const s = await scenario([
      { text: "Noted." },
      { text: "Noted." },
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
    ]);
    const owner = await mint(`owner-${s.id}`);
    const other = await mint(`other-${s.id}`);
    const operator = await mint(`operator-${s.id}`, { roles: ["operator"] });
    const { id, token, fileId } = await withFile(owner, s.tag("a photo"));
    const read = async (credential: string | undefined, conversation = id) => {
      const res = await call(`/v1/conversations/${conversation}/files/${fileId}`, { headers: bearer(credential) });
      const body = res.ok ? new Uint8Array(await res.arrayBuffer()) : ((await res.json()) as { error: { code: string } }).error.code;
      return [res.status, body];
    };
    expect(await read(owner)).toEqual([200, PNG]);
    expect(await read(token)).toEqual([200, PNG]);
    expect(await read(MASTER)).toEqual([200, PNG]);
    expect(await read(other)).toEqual([404, "conversation_not_found"]);
    // An operator reads a conversation's files through the operator API, and only while a person holds it: here an agent does.
    expect(await read(operator)).toEqual([404, "conversation_not_found"]);
    const desk = async () => {
      const res = await call(`/v1/operator/conversations/${id}/files/${fileId}`, { headers: bearer(operator) });
      return [
        res.status,
        res.ok ? new Uint8Array(await res.arrayBuffer()) : ((await res.json()) as { error: { code: string } }).error.code,
      ];
    };
    expect(await desk()).toEqual([404, "file_not_found"]);
    expect(await read(await mint(`owner-${s.id}`, {}, "rs2"))).toEqual([401, "unauthorized"]);
    expect(await read(undefined)).toEqual([401, "unauthorized"]);
    // The other user's own conversation, with this file's id: not found there either.
    const theirs = await withFile(other, s.tag("their photo"));
    expect(await read(other, theirs.id)).toEqual([404, "file_not_found"]);
    // Handed to a person, the desk reads it.
    const handed = await call(`/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(owner) },
      body: JSON.stringify({ message: s.tag("a person, please") }),
    });
    expect(handed.status).toBe(200);
    await handed.text();
    expect(await desk()).toEqual([200, PNG]);
  });
});
