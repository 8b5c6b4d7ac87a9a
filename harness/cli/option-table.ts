// Options as data: one typed table per command, keyed by the option's name in the parsed options, from which the
// command's --help, its parser and its replay lines are all made. The options check, load and serve share are here.
import { InvalidArgumentError, Option, type Command } from "commander";
import { METADATA_PLACEHOLDER } from "../_internals/metadata-placeholder.js";
import { API_KEY_PLACEHOLDER } from "../targets/http-curl.js";
import { RUN_DEFAULTS } from "../run-config.js";
import { withoutCredentials } from "../_internals/url-credentials.js";

export interface OptionSpec<T> {
  /** As commander reads them: `--timeout <duration>`, `--tls`. */
  flags: string;
  description: string;
  /** From the text given to the value (repeatable options: given the value so far). */
  parse?(value: string, previous: T): T;
  default?: T;
  /** The default as --help shows it, when not the value itself (5s for 5000 ms). */
  defaultShown?: string;
  choices?: readonly string[];
  /** Without it the command refuses to run. */
  required?: boolean;
  /**
   * How a replay line treats it: kept as typed (the default), named anew by the replay ("renew"), left out
   * ("leave-out": it wrote output the run already wrote), or shown through a function (secrets as placeholders).
   */
  replay?: "renew" | "leave-out" | ((value: string) => string);
}

/** A command's options, one spec for each key of its parsed options: an option cannot be left out of the table. */
export type OptionTable<O> = { readonly [K in keyof O]-?: OptionSpec<NonNullable<O[K]>> };

/** The commander option of a spec; its attribute name must be the key the table files it under. */
export function toOption(key: string, spec: OptionSpec<unknown>): Option {
  const option = new Option(spec.flags, spec.description);
  if (option.attributeName() !== key)
    throw new Error(`option table: ${spec.flags} is filed under ${key}, but parses as ${option.attributeName()}`);
  if (spec.parse) option.argParser(spec.parse);
  if (spec.choices) option.choices(spec.choices);
  if (spec.default !== undefined) option.default(spec.default, spec.defaultShown);
  if (spec.required) option.makeOptionMandatory();
  return option;
}

/** Every option of a table, in the order --help shows them (the table's order). */
export function toOptions<O>(table: OptionTable<O>): Option[] {
  return Object.entries<OptionSpec<unknown>>(table as Record<string, OptionSpec<unknown>>).map(([key, spec]) =>
    toOption(key, spec),
  );
}

// Parsers.

export const collect = (value: string, previous: string[]): string[] => [
  ...previous,
  ...value.split(",").filter(Boolean),
];
export const repeat = (value: string, previous: string[]): string[] => [...previous, value];

export function integer(name: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value))
      throw new InvalidArgumentError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000 } as const;

/** A duration with its unit: 500ms, 5s, 1m (1.5s too). A bare number is refused: is 5 five seconds or five ms? */
export function duration(name: string, max = 600_000) {
  return (value: string): number => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
    if (!m)
      throw new InvalidArgumentError(
        `${name} must be a duration such as 500ms, 5s or 1m, got ${JSON.stringify(value)}`,
      );
    if (m[2] === undefined)
      throw new InvalidArgumentError(`${name} ${value}: give a unit, ms, s or m (such as ${value}s or ${value}ms)`);
    const n = Number(m[1]) * DURATION_UNITS[m[2] as keyof typeof DURATION_UNITS];
    if (n < 1 || n > max)
      throw new InvalidArgumentError(`${name} must be between 1ms and ${max / 60_000}m, got ${value}`);
    return Math.round(n);
  };
}

/** A duration option whose help shows its default as the user writes it (5s), not as milliseconds. */
export function durationSpec(
  flags: string,
  description: string,
  defaultMs: number,
  defaultShown: string,
  max?: number,
): OptionSpec<number> {
  return { flags, description, parse: duration(flags.split(" ")[0] as string, max), default: defaultMs, defaultShown };
}

const flagName = (flags: string): string => flags.split(" ")[0] as string;

/** A whole-number option between min and max. */
export function integerSpec(
  flags: string,
  description: string,
  min: number,
  max: number,
  defaultValue?: number,
): OptionSpec<number> {
  return {
    flags,
    description,
    parse: integer(flagName(flags), min, max),
    ...(defaultValue !== undefined && { default: defaultValue }),
  };
}

// The options several commands share, each worded for the command that shows it.

export const shared = {
  /** --grpc: a gRPC target's address, never shown with credentials. */
  grpc: (description: string, required = false): OptionSpec<string> => ({
    flags: "--grpc <address>",
    description,
    replay: withoutCredentials,
    ...(required && { required }),
  }),
  timeout: (what: string): OptionSpec<number> =>
    durationSpec(
      "--timeout <duration>",
      `bound on ${what}: 500ms, 5s, 1m`,
      RUN_DEFAULTS.timeoutMs,
      `${RUN_DEFAULTS.timeoutMs / 1000}s`,
    ),
  rate: (description: string, max: number): OptionSpec<number> => integerSpec("--rate <n>", description, 1, max),
  maxRpcs: integerSpec("--max-rpcs <n>", "calls allowed for the whole run (default 10000)", 1, 10_000_000),
  grpcPort: (description: string, min: number, defaultValue?: number) =>
    integerSpec("--grpc-port <port>", description, min, 65535, defaultValue),
  httpPort: (description: string, min: number, defaultValue?: number) =>
    integerSpec("--http-port <port>", description, min, 65535, defaultValue),
  apiKey: (description: string): OptionSpec<string> => ({
    flags: "--api-key <key>",
    description,
    replay: () => API_KEY_PLACEHOLDER,
  }),
  tls: { flags: "--tls", description: "use TLS (system roots unless --ca)" } satisfies OptionSpec<boolean>,
  ca: { flags: "--ca <file>", description: "CA bundle (PEM) to trust" } satisfies OptionSpec<string>,
  cert: {
    flags: "--cert <file>",
    description: "client certificate (PEM), for mutual TLS",
  } satisfies OptionSpec<string>,
  key: { flags: "--key <file>", description: "client key (PEM), for mutual TLS" } satisfies OptionSpec<string>,
  authority: {
    flags: "--authority <name>",
    description: ":authority and TLS server name",
  } satisfies OptionSpec<string>,
  metadata: {
    flags: "--metadata <key=value>",
    description: "metadata sent on every call, such as credentials (repeatable; values are never printed)",
    parse: repeat,
    default: [],
    replay: (v) => (v.includes("=") ? `${v.slice(0, v.indexOf("="))}=${METADATA_PLACEHOLDER}` : METADATA_PLACEHOLDER),
  } satisfies OptionSpec<string[]>,
  metadataFromEnv: {
    flags: "--metadata-from-env <name>",
    description:
      "read key=value metadata lines from this environment variable, so credentials stay off the command line " +
      "(repeatable)",
    parse: repeat,
    default: [],
  } satisfies OptionSpec<string[]>,
  metadataFile: {
    flags: "--metadata-file <file>",
    description: "read key=value metadata lines from this file (repeatable)",
    parse: repeat,
    default: [],
  } satisfies OptionSpec<string[]>,
} as const;

/**
 * Whether the user gave an option (flag or environment), not its default: what a configuration file may not override.
 */
export function givenOn(command: Command): (key: string) => boolean {
  return (key) => {
    const source = command.getOptionValueSource(key);
    return source !== undefined && source !== "default";
  };
}
