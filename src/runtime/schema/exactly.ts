/**
 * A schema typed as the named type it describes, checked where it is written: `exactly<T>()(schema)` compiles only when the
 * schema's output and `T` hold the same values. The events and the stored rows are read through such schemas, so their
 * readers need no assertion.
 */
import type * as z from "zod";

/** Whether two types hold the same values. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

export function exactly<T>() {
  return <S extends z.ZodType>(schema: S & (Same<z.output<S>, T> extends true ? unknown : never)): z.ZodType<T> =>
    // The check is the parameter's type: a schema whose output is not T does not compile.
    schema as unknown as z.ZodType<T>;
}
