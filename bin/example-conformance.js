#!/usr/bin/env node
// The example-conformance command. It runs the compiled harness that `npm ci` (prepare) or `npm run build` writes.
// Whatever goes wrong here is the run's, never the server's: one line and exit 70 (internal), not Node's trace and
// exit 1, which would say "not conformant". The imports are inside the guard, so a missing dependency is caught too.
import { existsSync } from "node:fs";

const INTERNAL = 70;
/**
 * After the command has returned its code, what is still open (a stuck write, a socket) may delay the exit this long.
 */
const EXIT_GRACE_MS = 5_000;

/** One inert line: no control characters, no stack, at most 1 KiB of the message. */
function line(text) {
  const flat = String(text)
    .replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+/g, " ")
    .trim();
  return flat.length > 1024 ? `${flat.slice(0, 1024)}... (${flat.length - 1024} more characters)` : flat;
}

function internal(what, reason) {
  const message = reason instanceof Error ? reason.message : String(reason);
  const missing = reason && typeof reason === "object" && reason.code === "ERR_MODULE_NOT_FOUND";
  const hint = missing ? " (the installation is incomplete: reinstall with npm ci)" : "";
  process.stderr.write(`example-conformance: internal error: ${line(`${what}${message}`)}${hint}\n`);
  if (process.env.EXAMPLE_CONFORMANCE_DEBUG && reason instanceof Error) process.stderr.write(`${reason.stack ?? ""}\n`);
  process.exit(INTERNAL);
}

// A command that handles these itself (serve stops its servers first, then exits 70) is left to do so.
const unlessHandled = (event) => (reason) => {
  if (process.listenerCount(event) === 1) internal("", reason);
};
process.on("uncaughtException", unlessHandled("uncaughtException"));
process.on("unhandledRejection", unlessHandled("unhandledRejection"));

const compiled = new URL("../dist/harness/cli/main.js", import.meta.url);
if (!existsSync(compiled)) {
  process.stderr.write("example-conformance: the harness is not built; run `npm run build` (npm ci does it)\n");
  process.exitCode = 2;
} else {
  let main;
  try {
    ({ main } = await import(compiled.href));
  } catch (err) {
    internal("cannot load the harness: ", err);
  }
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
  // Reporters have written (main awaited them); anything still holding the event loop past the grace is cut off,
  // so the process ends within its bound with the code it returned.
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref();
}
