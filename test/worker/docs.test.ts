/**
 * The docs held to the code: the configuration table against the configuration's schema (names,
 * defaults, which are secrets and their minimums), the errors table against HTTP_ERROR_STATUS, the
 * routes table against the app's routes, the events table against the `RunEvent` union. A row
 * missing or stale fails here, so what a page promises is what a Worker does.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import configurationPage from "../../docs/configuration.md?raw";
import conversationsPage from "../../docs/conversations.md?raw";
import filesPage from "../../docs/files.md?raw";
import { FILE_TYPES } from "../../src/conversation/files/file-checks.ts";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { ConfigSchema, redactorFor } from "../../src/config.ts";
import { createApp } from "../../src/http/app.ts";
import { a2a, agUi } from "../../src/cloudflare/index.ts";
import { HTTP_ERROR_STATUS } from "../../src/http/errors.ts";
import { EVENT_SCHEMAS, type TurnStatus } from "../../src/runtime/events.ts";

const pages: Record<string, string> = import.meta.glob("../../docs/*.md", { query: "?raw", import: "default", eager: true });

/** The rows of the first table under `heading` (a line of the page), each a list of its cells (`\|` is a pipe inside a cell). */
function tableUnder(page: string, heading: string): string[][] {
  const lines = page.split("\n");
  const start = lines.indexOf(heading);
  expect(start, `the page has "${heading}"`).toBeGreaterThanOrEqual(0);
  const first = lines.findIndex((line, i) => i > start && line.startsWith("|"));
  const rows: string[][] = [];
  for (let i = first + 2; i < lines.length && lines[i]!.startsWith("|"); i++)
    rows.push(
      lines[i]!.slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
  return rows;
}

/** The one name a row's first cell gives, in backticks. */
function named(cell: string): string {
  const name = /^`([^`]+)`/.exec(cell)?.[1];
  expect(name, `a name in backticks: ${cell}`).toBeDefined();
  return name!;
}

describe("docs/configuration.md", () => {
  const rows = tableUnder(configurationPage, "## Every variable");
  const byName = new Map(rows.map((row) => [named(row[0]!), row]));
  const schema = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as {
    properties: Record<string, { default?: unknown; minLength?: number }>;
  };

  it("has one row for each variable the configuration reads, and none it does not", () => {
    expect(rows.map((row) => named(row[0]!))).toHaveLength(byName.size);
    expect([...byName.keys()].sort()).toEqual(Object.keys(ConfigSchema.shape).sort());
  });

  it("gives each variable's default as the configuration has it", () => {
    for (const [name, { default: value }] of Object.entries(schema.properties)) {
      if (value === undefined || value === "") continue;
      expect(byName.get(name)![1], name).toContain(`\`${String(value)}\``);
    }
  });

  it("marks the secrets (the values redacted everywhere) and gives each minimum the configuration enforces", () => {
    for (const [name, row] of byName) {
      const value = "v".repeat(48);
      const secret = redactorFor({ [name]: value }).text(value) !== value;
      expect(row[2]!.startsWith("**secret"), `${name} is ${secret ? "" : "not "}a secret`).toBe(secret);
      const minimum = schema.properties[name]!.minLength;
      const documented = /at least (\d+) characters/.exec(row[2]!)?.[1];
      expect(documented && Number(documented), `${name}'s minimum`).toBe(minimum && minimum > 1 ? minimum : undefined);
    }
  });
});

describe("docs/conversations.md", () => {
  it("lists every error code with its status, and no other", () => {
    const rows = tableUnder(conversationsPage, "### Errors");
    const documented = Object.fromEntries(rows.map((row) => [named(row[0]!), Number(row[1])]));
    expect(documented).toEqual(HTTP_ERROR_STATUS);
    expect(rows).toHaveLength(Object.keys(HTTP_ERROR_STATUS).length);
  });

  it("lists every route the app serves, and no other; no page documents a route the app does not serve", () => {
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    const served = [
      ...new Set(app.routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/v1/")).map((r) => `${r.method} ${r.path}`)),
    ];
    const rows = tableUnder(conversationsPage, "### Every route").map((row) => named(row[0]!));
    expect(rows.length).toBe(new Set(rows).size);
    expect(rows.sort()).toEqual(served.sort());
    for (const [path, page] of Object.entries(pages)) {
      const mentioned = [...page.matchAll(/^\| `((?:GET|POST|PUT|PATCH|DELETE) \/v1\/[^`?\s]*)/gm)].map((m) => m[1]!);
      expect(
        mentioned.filter((route) => !served.includes(route)),
        `${path}: routes the app does not serve`,
      ).toEqual([]);
    }
  });

  /** What `z.toJSONSchema` makes of an event's object schema. */
  type ObjectSchema = { properties: Record<string, unknown>; required?: string[] };

  it("lists every event type the schemas have, each with every field its schema has, and every status a done event can have", () => {
    const table = tableUnder(conversationsPage, "### Events");
    expect(table.map((row) => named(row[0]!)).sort()).toEqual(Object.keys(EVENT_SCHEMAS).sort());
    for (const [type, schema] of Object.entries(EVENT_SCHEMAS)) {
      const json = z.toJSONSchema(schema) as ObjectSchema & { anyOf?: ObjectSchema[] };
      const options = json.anyOf ?? [json];
      const fields = new Map(
        options.flatMap((option) => Object.keys(option.properties).map((name) => [name, !option.required?.includes(name)] as const)),
      );
      fields.delete("type");
      const row = table.find((cells) => named(cells[0]!) === type)![1]!;
      for (const [name, optional] of fields) {
        // A union's row (the handoff's kinds) names each field once, optional in one kind or not.
        const spelled = options.length > 1 ? [`\`${name}\``, `\`${name}?\``] : [`\`${name}${optional ? "?" : ""}\``];
        expect(
          spelled.some((s) => row.includes(s)),
          `the ${type} row names ${spelled.join(" or ")}`,
        ).toBe(true);
      }
    }
    const statuses = ["completed", "awaiting_approval", "awaiting_input", "awaiting_human", "cancelled"] as const;
    expectTypeOf<(typeof statuses)[number]>().toEqualTypeOf<TurnStatus>();
    const done = tableUnder(conversationsPage, "### Events").find((row) => row[0] === "`done`")![1]!;
    const listed = /`status` \(([^)]*)\)/
      .exec(done)?.[1]
      ?.match(/`[a-z_]+`/g)
      ?.map((s) => s.slice(1, -1));
    expect(listed?.sort()).toEqual([...statuses].sort());
  });
});

describe("docs/files.md", () => {
  const taken = tableUnder(filesPage, "## What is taken");

  it("names the media types the checks take, and no other", () => {
    const types = taken[0]![0]!.match(/`[a-z]+\/[a-z+.-]+`/g)!.map((type) => type.slice(1, -1));
    expect(types).toEqual([...FILE_TYPES]);
  });

  it("gives each refusal the status the API answers it with, and each limit its variable and default", () => {
    for (const [, refusal] of taken) {
      const [, status, code] = /^(\d{3}) `([a-z_]+)`/.exec(refusal!)!;
      expect(HTTP_ERROR_STATUS[code as keyof typeof HTTP_ERROR_STATUS], code).toBe(Number(status));
    }
    const defaults = ConfigSchema.parse({});
    const limits = { FILE_MAX_BYTES: "10 MB", FILES_PER_MESSAGE: "10", CONVERSATION_FILES_MAX_BYTES: "100 MB" } as const;
    for (const [name, shown] of Object.entries(limits)) {
      expect(filesPage, name).toContain(`\`${name}\` (${shown})`);
      const value = defaults[name as keyof typeof limits];
      expect(shown.endsWith("MB") ? value / 1024 / 1024 : value, name).toBe(Number.parseInt(shown, 10));
    }
  });

  it("says what the model is sent as the adapters send it", () => {
    const rows = tableUnder(filesPage, "## To the model");
    const sent = (api: "chat" | "responses", kind: string) => rows.find((row) => row[0] === kind)![api === "chat" ? 1 : 2]!;
    expect(sent("chat", "image")).toContain('type: "image_url"');
    expect(sent("responses", "image")).toContain('type: "input_image"');
    expect(sent("chat", "PDF")).toContain('type: "file"');
    expect(sent("responses", "PDF")).toContain('type: "input_file"');
  });
});
