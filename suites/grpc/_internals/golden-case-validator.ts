// The golden case format's validator. `npm run build` writes ajv's standalone code for the schema beside this file's
// compiled form (scripts/golden-case-validator.js), so that loading the catalogue neither loads ajv (about 80
// modules) nor compiles the schema and ajv's meta-schema (together about 0.2 s of CPU at every start of `check`).
// Where that code is absent (the sources run by vitest, a bundle) or was generated from another schema (a build
// whose last step did not run after the schema changed), ajv compiles the schema here: the same errors either way.
import type { ErrorObject } from "ajv";
import { GOLDEN_CASE_AJV_OPTIONS, GOLDEN_CASE_SCHEMA } from "./golden-case-schema.js";

/** A validator as ajv gives it: true or false, and on false the errors it found. */
export type GoldenCaseValidate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The file the build writes beside this module's compiled form; its exports are `validate` and `schemaJson`. */
export const GENERATED_VALIDATOR = "golden-case-validate.js";

/** The build's standalone validator when it was generated from this very schema, else ajv's compilation of it. */
export async function goldenCaseValidator(): Promise<GoldenCaseValidate> {
  const built = await generated();
  if (built && built.schemaJson === JSON.stringify(GOLDEN_CASE_SCHEMA) && typeof built.validate === "function")
    return built.validate as GoldenCaseValidate;
  const { Ajv } = await import("ajv");
  return new Ajv(GOLDEN_CASE_AJV_OPTIONS).compile(GOLDEN_CASE_SCHEMA);
}

/** The generated module, or undefined where there is none (any other failure to load it is thrown). */
async function generated(): Promise<{ validate?: unknown; schemaJson?: unknown } | undefined> {
  try {
    return (await import(new URL(GENERATED_VALIDATOR, import.meta.url).href)) as {
      validate?: unknown;
      schemaJson?: unknown;
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return undefined;
    throw err;
  }
}
