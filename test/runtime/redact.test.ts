import { describe, expect, it } from "vitest";
import { secretValues } from "../../src/config.ts";
import { REDACTED, Redactor, StreamingRedaction } from "../../src/runtime/redact.ts";

/** Keys in shapes no pattern would guess, next to the usual ones. */
const SHAPES = [
  "sk-proj-4Jq9XvZ2LmN8pQ7rS6tU5wY3",
  "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
  "c2Vzc2lvbi1zZWNyZXQ+Lz0=",
  "3f2b9c4e-1a7d-4e8b-9c2f-6d5a4b3c2e1f",
  'pass "word"\\with/odd%20chars',
];

describe("redaction by configured value", () => {
  it.each(SHAPES)("removes %s wherever it appears, raw, JSON-escaped or URL-encoded", (secret) => {
    const redactor = new Redactor([secret]);
    expect(redactor.text(`key=${secret}; again ${secret}.`)).toBe(`key=${REDACTED}; again ${REDACTED}.`);
    expect(redactor.text(JSON.stringify({ message: `echo ${secret}` }))).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(redactor.text(`https://x.test/?k=${encodeURIComponent(secret)}`)).toBe(`https://x.test/?k=${REDACTED}`);
  });

  it("walks JSON values and returns the same object when nothing needed redacting", () => {
    const redactor = new Redactor([SHAPES[1]!]);
    const clean = { a: [1, "two", { three: null }] };
    expect(redactor.value(clean)).toBe(clean);
    const dirty = { a: [1, `x ${SHAPES[1]}`], b: { c: SHAPES[1] }, d: true };
    expect(redactor.value(dirty)).toEqual({ a: [1, `x ${REDACTED}`], b: { c: REDACTED }, d: true });
  });

  it("ignores values too short to be secrets, which would match ordinary words", () => {
    expect(new Redactor(["abc", ""]).empty).toBe(true);
    expect(new Redactor(["abc"]).text("abc")).toBe("abc");
  });

  it("catches a secret split across stream chunks, holding back only what could start one", () => {
    for (const secret of SHAPES) {
      const text = `Your key is ${secret}, keep it safe. ${secret.slice(0, 5)} is not one.`;
      const stream = new StreamingRedaction(new Redactor([secret]));
      const out: string[] = [];
      for (let i = 0; i < text.length; i += 3) out.push(stream.push(text.slice(i, i + 3)));
      out.push(stream.flush());
      expect(out.join("")).toBe(`Your key is ${REDACTED}, keep it safe. ${secret.slice(0, 5)} is not one.`);
    }
    const plain = new StreamingRedaction(new Redactor([SHAPES[0]!]));
    expect(plain.push("nothing secret here")).toBe("nothing secret here");
  });

  it("takes secrets from the environment by name, with header values inside header variables", () => {
    const values = secretValues({
      OPENAI_API_KEY: "provider-key-123456",
      SESSION_SECRET: "session-secret-value",
      MCP_HEADERS: JSON.stringify({ authorization: "Bearer mcp-token-abcdef" }),
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=otel%20key%2099,other=plain-value-1",
      OPENAI_MODEL: "gpt-4o-mini-not-a-secret",
    });
    for (const value of ["provider-key-123456", "session-secret-value", "mcp-token-abcdef", "otel key 99", "plain-value-1"])
      expect(values).toContain(value);
    expect(values).not.toContain("gpt-4o-mini-not-a-secret");
  });
});

describe("redaction edges", () => {
  it("redacts a secret of exactly the minimum length, and a longer secret before one it contains", () => {
    expect(new Redactor(["12345678"]).text("pin 12345678")).toBe(`pin ${REDACTED}`);
    expect(new Redactor(["1234567"]).text("pin 1234567")).toBe("pin 1234567");
    expect(new Redactor(["abcdefgh", "abcdefgh-long"]).text("x abcdefgh-long y")).toBe(`x ${REDACTED} y`);
  });

  it("walks nulls, numbers and nested arrays, keeping untouched values as they are", () => {
    const redactor = new Redactor(["secret-value-1"]);
    const nested = [null, 3, ["a", { b: null }]];
    expect(redactor.value(nested)).toBe(nested);
    expect(redactor.value(null)).toBeNull();
    expect(redactor.value([["secret-value-1"]])).toEqual([[REDACTED]]);
  });

  it("holds back only the longest tail that could start a secret, and nothing after a flush", () => {
    const stream = new StreamingRedaction(new Redactor(["secret-value-1"]));
    expect(stream.push("a secr")).toBe("a ");
    expect(stream.push("x")).toBe("secrx");
    expect(stream.push(" sec")).toBe(" ");
    expect(stream.flush()).toBe("sec");
    expect(stream.flush()).toBe("");
    expect(stream.push("done")).toBe("done");
    expect(new StreamingRedaction(new Redactor([])).push("secr")).toBe("secr");
  });
});
