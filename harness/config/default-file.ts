// The configuration file read when --config is not given, apart from its parser so that naming it loads nothing.
import { existsSync } from "node:fs";

export const DEFAULT_CONFIG_FILE = "example-conformance.yaml";

/** The configuration file a command reads: the one --config names, else ./example-conformance.yaml when present. */
export function configFileToRead(named: string | undefined): string | undefined {
  return named ?? (existsSync(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined);
}
