// Replay lines: the user's own `check` invocation with --only, --seed and --path replaced, every secret as a
// placeholder the user fills, and report files left out so a replay does not overwrite the run's reports.
import type { Option } from "commander";
import type { ReplayArgs } from "../report.js";
import { METADATA_PLACEHOLDER } from "../runner.js";
import { API_KEY_PLACEHOLDER, shellQuote } from "../targets/create-http-target.js";
import { withoutCredentials } from "../_internals/url-credentials.js";

const PREFIX = "npx example-conformance check";

/** Flags a replay names anew (--only, --seed, --path) or leaves out (reporters and report files: the run wrote them). */
const REPLACED = new Set(["--only", "--seed", "--path", "--report-json", "--report-junit", "--report-html", "--reporter", "--list"]);

/** How a secret flag's value is shown. */
const SECRET: Readonly<Record<string, (value: string) => string>> = {
  "--api-key": () => API_KEY_PLACEHOLDER,
  "--metadata": (v) => (v.includes("=") ? `${v.slice(0, v.indexOf("="))}=${METADATA_PLACEHOLDER}` : METADATA_PLACEHOLDER),
  "--http": withoutCredentials,
  "--grpc": withoutCredentials,
  "--replica": withoutCredentials,
};

/** Splits argv into options (with their values, as one token or two) and keeps everything else as it was. */
function tokens(argv: readonly string[], options: readonly Option[]): { flag?: string; value?: string; raw: string[] }[] {
  const out: { flag?: string; value?: string; raw: string[] }[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) {
      out.push({ raw: [arg] });
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const option = options.find((o) => o.long === flag);
    const takesValue = option !== undefined && (option.required || option.optional);
    if (!takesValue) out.push({ flag, raw: [arg] });
    else if (eq >= 0) out.push({ flag, value: arg.slice(eq + 1), raw: [arg] });
    else {
      const value = argv[i + 1];
      i++;
      out.push({ flag, ...(value !== undefined && { value }), raw: value !== undefined ? [arg, value] : [arg] });
    }
  }
  return out;
}

/** The replay line renderer for one invocation: the argv as the user typed it, after `check`. */
export function createReplayRenderer(argv: readonly string[], options: readonly Option[]): (args: ReplayArgs) => string {
  const kept: string[] = [];
  for (const t of tokens(argv, options)) {
    if (t.flag !== undefined && REPLACED.has(t.flag)) continue;
    const secret = t.flag !== undefined ? SECRET[t.flag] : undefined;
    if (t.flag !== undefined && t.value !== undefined) {
      kept.push(t.flag, shellQuote(secret ? secret(t.value) : t.value));
    } else {
      kept.push(...t.raw.map(shellQuote));
    }
  }
  const base = [PREFIX, ...kept].join(" ");
  return (args) => [base, "--only", shellQuote(args.only), "--seed", String(args.seed), ...(args.path !== undefined ? ["--path", shellQuote(args.path)] : [])].join(" ");
}
