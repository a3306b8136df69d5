/**
 * A trace exported with no OTEL_CAPTURE_CONTENT (this project's collector, set in vitest.config.ts):
 * the spans go out with names, ids, counts and the handoff's reason, and none of what was said — no
 * message, answer, call arguments or result — as the default promises.
 */
import { describe, expect, it } from "vitest";
import { exportedSpans, operation, TRACED_TURN } from "../support/otlp.ts";
import { chat, scenario } from "../support/worker.ts";

const CONTENT = ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];

describe("a trace exported without content capture", () => {
  it("carries the turn's spans and none of what was said", async () => {
    // The turn the trace-export project exports with its content.
    const s = await scenario(TRACED_TURN);
    expect((await chat(s.conversationId, s.tag("charged twice on A1001"))).at(-1)).toMatchObject({ status: "completed" });
    const spans = await exportedSpans("plain-collector", s.conversationId, (found) => found.some((span) => span.name === "turn 1"));
    expect(operation(spans, "chat")).toHaveLength(3);
    expect(operation(spans, "execute_tool").map((span) => span.attributes["gen_ai.tool.name"])).toEqual(["lookup_order"]);
    expect(spans.flatMap((span) => CONTENT.filter((name) => name in span.attributes))).toEqual([]);
    const everything = JSON.stringify(spans);
    expect(everything).not.toContain("charged twice");
    expect(everything).not.toContain("double charge");
  });
});
