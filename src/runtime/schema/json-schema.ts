/**
 * JSON Schema as the runtime meets it: what a value fails of a schema (checked with
 * `@cfworker/json-schema`, which validates without generating code: Workers forbid `eval`), and the
 * schema of what a user answers, made from a zod schema.
 */
import { Validator } from "@cfworker/json-schema";
import * as z from "zod";

/** JSON Schema, as requests and servers carry it. */
export type JsonSchema = Record<string, unknown>;

/** By schema object: a schema checked again (a cached tool list's, a waiting request's) is compiled once. */
const validators = new WeakMap<JsonSchema, Validator>();

/** What `value` fails of `schema`, innermost failures only (`what` names the value when the failure is the whole of it), or undefined. */
export function schemaProblems(schema: JsonSchema, value: unknown, what: string): string | undefined {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema as ConstructorParameters<typeof Validator>[0], "2020-12", false);
    validators.set(schema, validator);
  }
  const result = validator.validate(value);
  if (result.valid) return undefined;
  // The innermost failures say what to fix; the outer ones only that something below failed.
  const errors = result.errors.filter(
    (e) => !result.errors.some((other) => other !== e && other.keywordLocation.startsWith(`${e.keywordLocation}/`)),
  );
  return errors.map((e) => `${e.instanceLocation === "#" ? what : e.instanceLocation.replace(/^#\//, "")}: ${e.error}`).join("; ");
}

/** The JSON Schema of what the user sends for a zod schema (its input side), as a request shows it. */
export function answerSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dropped, ...json } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;
  return json;
}
