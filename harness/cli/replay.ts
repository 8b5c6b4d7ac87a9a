// Replay lines: the user's own `check` invocation with --only, --seed and --path replaced, every secret as a
// placeholder the user fills, and reporters left out so a replay does not overwrite the run's reports. What each
// option does in a replay is written in its command's option table.
import { Option } from "commander";
import type { ReplayArgs } from "../report.js";
import { shellQuote } from "../_internals/shell-quote.js";
import type { OptionSpec, OptionTable } from "./option-table.js";

interface Token {
  flag?: string;
  value?: string;
  raw: string[];
}

/** Splits argv into options (with their values, as one token or two) and keeps everything else as it was. */
function tokens(argv: readonly string[], specs: ReadonlyMap<string, OptionSpec<unknown>>): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) {
      out.push({ raw: [arg] });
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const spec = specs.get(flag);
    const option = spec && new Option(spec.flags);
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

/**
 * The replay line renderer for one invocation: the argv as the user typed it, after the command's name. What follows
 * a `--` (check-client's client command) is no option of ours: it is kept as typed, after the replay's own options.
 */
export function createReplayRenderer<O>(
  all: readonly string[],
  table: OptionTable<O>,
  command = "check",
): (args: ReplayArgs) => string {
  const end = all.indexOf("--");
  const argv = end < 0 ? all : all.slice(0, end);
  const operands = end < 0 ? "" : ` ${all.slice(end).map(shellQuote).join(" ")}`;
  const specs = new Map(
    Object.values<OptionSpec<unknown>>(table as Record<string, OptionSpec<unknown>>).map((s) => [
      s.flags.split(" ")[0] as string,
      s,
    ]),
  );
  const kept: string[] = [];
  for (const t of tokens(argv, specs)) {
    const replay = t.flag !== undefined ? specs.get(t.flag)?.replay : undefined;
    if (replay === "renew" || replay === "leave-out") continue;
    if (t.flag !== undefined && t.value !== undefined) {
      kept.push(t.flag, shellQuote(replay ? replay(t.value) : t.value));
    } else {
      kept.push(...t.raw.map(shellQuote));
    }
  }
  const line = (leaveOut: readonly string[]) =>
    [
      `npx example-conformance ${command}`,
      ...kept.filter((_, i) => !leaveOut.includes(kept[i] as string) && !leaveOut.includes(kept[i - 1] as string)),
    ].join(" ");
  const base = line([]);
  return (args) =>
    [
      args.leaveOut ? line(args.leaveOut) : base,
      "--only",
      shellQuote(args.only),
      "--seed",
      String(args.seed),
      ...(args.path !== undefined ? ["--path", shellQuote(args.path)] : []),
    ].join(" ") + operands;
}
