/** The trace exporter against collectors that misbehave: it retries, gives up, drops, and never throws. */
import { describe, expect, inject, it } from "vitest";
import { OtlpExporter, parseOtlpHeaders } from "../../src/traces/otlp-export.ts";

function exporter(endpoint: string) {
  const log: string[] = [];
  return { log, exporter: new OtlpExporter({ endpoint, headers: {} }, (message) => log.push(message)) };
}

describe("the OTLP exporter", () => {
  it("gives up on a collector that is down, after its retries, without throwing", async () => {
    const { exporter: down, log } = exporter("http://127.0.0.1:9/v1/traces");
    await down.export({ resourceSpans: [] });
    expect(log.at(-1)).toBe("trace export: gave up after 3 attempts; the trace was dropped");
  });

  it("drops a trace the collector refuses (4xx) without retrying, and sends to a slow one", async () => {
    const { exporter: refusing, log } = exporter(`${inject("fakeOpenAIUrl")}/refuse/v1/traces`);
    await refusing.export({ resourceSpans: [] });
    expect(log).toEqual(["trace export: the collector answered 404; the trace was dropped"]);
    const slow = exporter(`${inject("fakeOpenAIUrl")}/otlp/slow-collector/v1/traces`);
    await slow.exporter.export({ resourceSpans: [] });
    expect(slow.log).toEqual([]);
    const received = (await (await fetch(`${inject("fakeOpenAIUrl")}/otlp/slow-collector`)).json()) as unknown[];
    expect(received).toHaveLength(1);
  });

  it("keeps at most 16 traces waiting behind the one in flight", async () => {
    const { exporter: busy, log } = exporter(`${inject("fakeOpenAIUrl")}/otlp/queue-collector/v1/traces`);
    const sends = Array.from({ length: 20 }, (_, n) => busy.export({ resourceSpans: [], n }));
    expect(log).toEqual(Array.from({ length: 3 }, () => "trace export: the queue is full; the oldest trace was dropped"));
    await Promise.all(sends);
    const received = (await (await fetch(`${inject("fakeOpenAIUrl")}/otlp/queue-collector`)).json()) as Array<{ body: { n: number } }>;
    // The one in flight, then the newest 16: the three after it were dropped.
    expect(received.map((r) => r.body.n)).toEqual([0, ...Array.from({ length: 16 }, (_, i) => i + 4)]);
  });

  it("reads OTEL_EXPORTER_OTLP_HEADERS as name=value pairs, values URL-encoded", () => {
    expect(parseOtlpHeaders("api-key=a%20b, x-team = blue ,broken")).toEqual({ "api-key": "a b", "x-team": "blue" });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});
