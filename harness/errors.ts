// One error type for everything the harness refuses, with a closed set of codes that map to exit codes.

export type ErrorCode = "usage" | "config" | "unreachable" | "internal" | "credentials" | "refusing";

export const EXIT_CODES: Readonly<Record<ErrorCode, number>> = {
  usage: 2,
  config: 2,
  // Unreachable, it does not speak the protocol its flag names, or it answered none of the checks' calls: nothing
  // about it was judged.
  unreachable: 3,
  // Anything the harness did not foresee, a broken install included (sysexits' EX_SOFTWARE): never 1, which
  // would say the server failed.
  internal: 70,
  // The target refuses every call for want of credentials: nothing can be judged, and no check has failed.
  credentials: 5,
  // The target kept asking the run to wait (429, RESOURCE_EXHAUSTED with a pushback) past the bound of its waits: what
  // it refused was not judged, and no check has failed for it.
  refusing: 4,
};

export class ConformanceError extends Error {
  override name = "ConformanceError";
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  get exitCode(): number {
    return EXIT_CODES[this.code];
  }

  /** Wraps anything caught: a ConformanceError as it is, anything else as internal. */
  static from(reason: unknown): ConformanceError {
    if (reason instanceof ConformanceError) return reason;
    const message = reason instanceof Error ? reason.message : String(reason);
    return new ConformanceError("internal", message, { cause: reason });
  }
}

/**
 * The exit codes of `check`, one table for every output: docs/exit-codes.md (and the README's short table), `check
 * --help`, and the GitHub Action's `verdict` output (action.yml); test/cli/exit-code-table.test.ts keeps them the same.
 */
export const EXIT_CODE_TABLE: readonly { code: number; action: string; meaning: string }[] = [
  {
    code: 0,
    action: "conformant",
    meaning: "conformant, conformant with waivers, or partial (the verdict says which)",
  },
  { code: 1, action: "not-conformant", meaning: "the server failed a gating check" },
  { code: 2, action: "usage-error", meaning: "usage or configuration error, a report that cannot be written included" },
  {
    code: EXIT_CODES.unreachable,
    action: "unreachable",
    meaning:
      "the target is unreachable, does not speak the protocol its flag names, or answered none of the checks' calls",
  },
  {
    code: EXIT_CODES.refusing,
    action: "refusing",
    meaning:
      "cannot check: the target keeps refusing (429 or RESOURCE_EXHAUSTED asking for waits past the run's bound)",
  },
  {
    code: EXIT_CODES.credentials,
    action: "cannot-check",
    meaning: "cannot check: credentials missing, refused or in the wrong place",
  },
  {
    code: EXIT_CODES.internal,
    action: "internal-error",
    meaning: "internal error of the harness (a broken install included)",
  },
];
