/**
 * A request body with its files' base64 spliced in as bytes: the JSON a provider reads is the JSON of the same body with
 * the data URLs written whole, whatever text surrounds them.
 */
import { describe, expect, it } from "vitest";
import { base64, dataUrlText, type InlineData } from "../../src/models/file-parts.ts";
import { SplicedJson } from "../../src/models/spliced-json.ts";

function inline(bytes: number[], mediaType = "image/png"): InlineData {
  return { mediaType, base64: new TextEncoder().encode(base64(new Uint8Array(bytes))) };
}

describe("a spliced JSON body", () => {
  it("is byte for byte the JSON of the body with its data URLs whole", () => {
    const [a, b] = [inline([1, 2, 3, 250]), inline([9, 8, 7], "application/pdf")];
    const body = (dataUrl: (data: InlineData) => string) => ({
      messages: [
        { role: "user", content: [{ text: 'émoji ✓ "quoted" \\ and a line\n' }, { image_url: { url: dataUrl(a) } }] },
        { role: "user", content: [{ file_data: dataUrl(b) }, { image_url: { url: dataUrl(a) } }] },
      ],
    });
    const spliced = new SplicedJson();
    const bytes = spliced.encode(body(spliced.dataUrl));
    expect(new TextDecoder().decode(bytes)).toBe(JSON.stringify(body(dataUrlText)));
    expect(JSON.parse(new TextDecoder().decode(bytes)).messages[1].content[0].file_data).toBe("data:application/pdf;base64,CQgH");
  });

  it("replaces only its own stand-ins: a message that looks like one is sent as written", () => {
    const spliced = new SplicedJson();
    const own = spliced.dataUrl(inline([1]));
    const lookalike = own.replace(/spliced-[0-9a-f-]+-/, "spliced-00000000-0000-0000-0000-000000000000-");
    const sent = JSON.parse(new TextDecoder().decode(spliced.encode({ text: lookalike, url: own })));
    expect(sent).toEqual({ text: lookalike, url: "data:image/png;base64,AQ==" });
  });

  it("is the plain JSON of a body without files", () => {
    const body = { model: "m", messages: [{ role: "user", content: "hello" }], stream: true };
    expect(new TextDecoder().decode(new SplicedJson().encode(body))).toBe(JSON.stringify(body));
  });
});
