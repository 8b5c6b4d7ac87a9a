// A JSON report read back for comparison: bounded in bytes, validated before use, every problem one usage line.
import { readFile, stat } from "node:fs/promises";
import type { ValidateFunction } from "ajv";
import { ConformanceError } from "../errors.js";
import type { ComparableReport } from "./compare-runs.js";

/** A report past this is no report of ours (the largest real ones are a few MiB): refused before it is read. */
export const MAX_REPORT_BYTES = 64 * 1024 * 1024;

const STATUSES = ["pass", "fail", "skip", "error", "expected-fail"];

// Only what the comparison reads is required; anything else a report holds is left as it is.
const SCHEMA = {
  type: "object",
  required: ["checks"],
  properties: {
    checks: {
      type: "array",
      maxItems: 100_000,
      items: {
        type: "object",
        required: ["id", "status", "gating"],
        properties: {
          id: { type: "string", maxLength: 200 },
          status: { enum: STATUSES },
          gating: { type: "boolean" },
          message: { type: "string" },
        },
      },
    },
    target: { type: "object" },
    exitCode: { type: "integer" },
  },
};

let validator: ValidateFunction<ComparableReport> | undefined;
/** The validator, compiled on first use: a run that compares nothing never loads ajv. */
async function validatorOf(): Promise<ValidateFunction<ComparableReport>> {
  const { Ajv } = await import("ajv");
  validator ??= new Ajv({ allErrors: false }).compile<ComparableReport>(SCHEMA);
  return validator;
}

/**
 * Reads a JSON report written by `check --report-json` (or `--reporter json=FILE`); `role` names the flag or argument.
 */
export async function loadReport(path: string, role: string): Promise<ComparableReport & { exitCode?: number }> {
  const fail = (why: string) => new ConformanceError("usage", `${role} ${path}: ${why}`);
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw fail(err.code === "ENOENT" ? "no such file" : `cannot read: ${err.code ?? err.message}`);
  });
  if (!info.isFile()) throw fail("not a file");
  if (info.size > MAX_REPORT_BYTES)
    throw fail(`${info.size} bytes, more than a report holds (${MAX_REPORT_BYTES} at most)`);
  const text = await readFile(path, "utf8").catch((err: NodeJS.ErrnoException) => {
    throw fail(`cannot read: ${err.code ?? err.message}`);
  });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw fail(`not JSON (${(err as Error).message}): give a report written by check --report-json`);
  }
  const validate = await validatorOf();
  if (!validate(data)) {
    const e = validate.errors?.[0];
    throw fail(
      `not a report of check --report-json (${e?.instancePath || "the document"} ${e?.message ?? "is not one"})`,
    );
  }
  for (const c of data.checks) c.message ??= "";
  return data as ComparableReport & { exitCode?: number };
}
