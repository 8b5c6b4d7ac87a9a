// Entry of the GitHub Action (action.yml runs its bundle, action-dist/index.js, built by scripts/bundle-action.js):
// reads the inputs as the runner sets them (actionInput), refuses a command, require or reports it does not know in
// one line (exit 2, verdict usage-error), then runs the check (action-check.ts) or the contract gate.
import { appendFileSync } from "node:fs";
import { ConformanceError, EXIT_CODES } from "../errors.js";
import { forTerminal } from "../_internals/neutralise.js";
import { errorLine } from "../cli/error-line.js";
import { actionCheck } from "./action-check.js";
import { actionInput } from "./action-input.js";
import { contractGate } from "./contract-gate.js";
import { REQUIRE_LEVELS, type RequireLevel } from "./require-verdict.js";

/** After the run has its code, what is still open (a socket, a timer) may delay the exit this long, as the CLI's. */
const EXIT_GRACE_MS = 5_000;

function usage(message: string): never {
  throw new ConformanceError("usage", message);
}

async function run(): Promise<number> {
  const command = actionInput("command") || "check";
  if (command === "contract") return contractGate();
  if (command !== "check") usage(`command ${forTerminal(command)}: expected check or contract`);
  const required = actionInput("require") || "conformant";
  if (!(REQUIRE_LEVELS as readonly string[]).includes(required))
    usage(`require ${forTerminal(required)}: expected conformant or partial`);
  return actionCheck(required as RequireLevel);
}

/** The action's exit code; a usage error (or anything unforeseen) is one line, its outputs set, never a stack. */
async function runAction(): Promise<number> {
  try {
    return await run();
  } catch (reason) {
    const { line, exitCode } = errorLine(reason);
    process.stderr.write(line);
    const verdict = exitCode === 2 ? "usage-error" : "internal-error";
    if (process.env.GITHUB_OUTPUT)
      appendFileSync(process.env.GITHUB_OUTPUT, `verdict=${verdict}\nexit-code=${exitCode}\n`);
    return exitCode;
  }
}

// Whatever escapes the run is the harness's, never the target's: one line and exit 70, not Node's trace and exit 1.
for (const event of ["uncaughtException", "unhandledRejection"] as const) {
  process.on(event, (reason: unknown) => {
    process.stderr.write(
      errorLine(new ConformanceError("internal", reason instanceof Error ? reason.message : String(reason))).line,
    );
    process.exit(EXIT_CODES.internal);
  });
}

const code = await runAction();
process.exitCode = code;
setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
