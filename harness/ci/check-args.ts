// The command line of `check` that the GitHub Action's inputs ask for. Secrets never appear in it: the API key and
// the metadata reach the CLI through its environment (EXAMPLE_API_KEY, --metadata-from-env), and the signing key
// through a file of its own (--sign-key names the file, never the key).
import { PROTOCOLS } from "../protocols/index.js";
import { actionInput } from "./action-input.js";

/** The environment variable the metadata input is handed over in (named by --metadata-from-env). */
export const METADATA_ENV = "EXAMPLE_ACTION_METADATA";

/** Where the run writes what the workflow keeps: each report file asked for, the trace folder, the attestation. */
export interface ActionFiles {
  json?: string;
  junit?: string;
  html?: string;
  trace?: string;
  attestation?: string;
  /** The signing key's file, written from the signing-key input. */
  signKey?: string;
}

/** Inputs that take one value each, and the flag each becomes. */
const SINGLE: readonly (readonly [string, string])[] = [
  ["config", "--config"],
  // An input per built-in protocol, named as the protocol is (action.yml declares them): its CLI flag.
  ...Object.values(PROTOCOLS).map((m) => [m.name, m.cli.flag] as const),
  ["http", "--http"],
  ["openapi", "--openapi"],
  ["image", "--image"],
  ["grpc-port", "--grpc-port"],
  ["http-port", "--http-port"],
  ["api-key-in", "--api-key-in"],
  ["ca", "--ca"],
  ["cert", "--cert"],
  ["key", "--key"],
  ["authority", "--authority"],
  ["only", "--only"],
  ["skip", "--skip"],
  ["profile", "--profile"],
  ["timeout", "--timeout"],
  ["expected-failures", "--expect-failures"],
  ["baseline", "--baseline"],
  ["fail-on", "--fail-on"],
];
/** Inputs that take a list (one a line, or comma-separated), each item its own flag. */
const REPEATED: readonly (readonly [string, string])[] = [
  ["replica", "--replica"],
  ["http-replica", "--http-replica"],
  ["collection", "--collection"],
];
/** Inputs that are "true" or not, and the flag each turns on. */
const SWITCHES: readonly (readonly [string, string])[] = [
  ["tls", "--tls"],
  ["strict", "--strict"],
];

/** The items of a list input: one a line or comma-separated, blanks dropped. */
function listInput(name: string): string[] {
  return actionInput(name)
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function checkArgs(files: ActionFiles): string[] {
  const args = ["check"];
  const flag = (name: string, value: string | undefined) => {
    if (value !== undefined && value !== "") args.push(name, value);
  };
  flag("--report-json", files.json);
  flag("--report-junit", files.junit);
  flag("--report-html", files.html);
  for (const [input, name] of SINGLE) flag(name, actionInput(input));
  for (const [input, name] of REPEATED) for (const item of listInput(input)) flag(name, item);
  for (const [input, name] of SWITCHES) if (actionInput(input) === "true") args.push(name);
  if (actionInput("metadata") !== "") flag("--metadata-from-env", METADATA_ENV);
  flag("--trace", files.trace);
  flag("--attestation", files.attestation);
  flag("--sign-key", files.signKey);
  return args;
}
