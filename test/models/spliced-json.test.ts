/**
 * A request body with its files' base64 spliced in as bytes: the JSON a provider reads is the JSON of the same body with
 * the data URLs written whole, whatever text surrounds them.
 */
import { describe, expect, it } from "vitest";
import { base64Bytes, dataUrlText, type InlineData } from "../../src/models/file-parts.ts";
import { SplicedJson } from "../../src/models/spliced-json.ts";

function inline(bytes: number[], mediaType = "image/png"): InlineData {
  return { mediaType, base64: base64Bytes(new Uint8Array(bytes)) };
}

describe("a spliced JSON body", () => {
  it("is byte for byte the JSON of the body with its data URLs whole", async () => {
    const [a, b] = [inline([1, 2, 3, 250]), inline([9, 8, 7], "application/pdf")];
    const body = (dataUrl: (data: InlineData) => string) => ({
      messages: [
        { role: "user", content: [{ text: 'émoji ✓ "quoted" \\ and a line\n' }, { image_url: { url: dataUrl(a) } }] },
        { role: "user", content: [{ file_data: dataUrl(b) }, { image_url: { url: dataUrl(a) } }] },
      ],
    });
    const spliced = new SplicedJson();
    const sent = await spliced.encode(body(spliced.dataUrl)).text();
    expect(sent).toBe(JSON.stringify(body(dataUrlText)));
    expect(JSON.parse(sent).messages[1].content[0].file_data).toBe("data:application/pdf;base64,CQgH");
  });

  it("replaces only its own stand-ins: a message that looks like one is sent as written", async () => {
    const spliced = new SplicedJson();
    const own = spliced.dataUrl(inline([1]));
    const lookalike = own.replace(/spliced-[0-9a-f-]+-/, "spliced-00000000-0000-0000-0000-000000000000-");
    const sent = JSON.parse(await spliced.encode({ text: lookalike, url: own }).text());
    expect(sent).toEqual({ text: lookalike, url: "data:image/png;base64,AQ==" });
  });

  it("is the plain JSON of a body without files", async () => {
    const body = { model: "m", messages: [{ role: "user", content: "✓ hello" }], stream: true };
    expect(await new SplicedJson().encode(body).text()).toBe(JSON.stringify(body));
  });
});

describe("a file's base64 as bytes", () => {
  // Around the size of a piece encoded at a time (24 KiB): the pieces join as one base64 text, padded only at its end.
  it.each([0, 1, 2, 3, 4, 24_575, 24_576, 24_577, 24_578, 3 * 24_576 + 2])("is the base64 of %i bytes", (size) => {
    const bytes = Uint8Array.from({ length: size }, (_, i) => (i * 131 + (i >> 8)) & 0xff);
    const expected = btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""));
    expect(new TextDecoder().decode(base64Bytes(bytes))).toBe(expected);
  });
});
