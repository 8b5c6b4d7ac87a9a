// The configuration file under the flags: each value the file gives is taken only where the user gave no flag for
// it, so a flag always overrides the file; credentials come from the environment variables the file names.
import type { CheckDefinition } from "../check.js";
import type { Claims } from "../claims.js";
import { ConformanceError } from "../errors.js";
import { configExpectations, type Expectation } from "../expectations.js";
import type { CheckCliOptions } from "../cli/check-options.js";
import { optionKey } from "../cli/rpc-target.js";
import { protocolModules } from "../protocols/index.js";
import type { ConformanceConfig, Implementation } from "./config-file.js";

/** What the file adds to a run beyond the flags: who is certified, what it claims, what it expects to fail. */
export interface ConfigExtras {
  implementation?: Implementation;
  claims?: Claims;
  expectations: Expectation[];
}

/**
 * The options with the file's values where no flag was given (`given(key)` says whether the user gave that option),
 * and what the file adds. An environment variable the file names for a credential and that is unset is a config
 * error naming the variable, never a check's failure.
 */
export function applyConfig(
  opts: CheckCliOptions,
  config: ConformanceConfig,
  given: (key: keyof CheckCliOptions) => boolean,
  env: Readonly<Record<string, string | undefined>>,
  checks: readonly CheckDefinition[],
): { opts: CheckCliOptions; extras: ConfigExtras } {
  const out: CheckCliOptions = { ...opts };
  const t = config.targets ?? {};
  // One RPC target a run: a flag naming any of them replaces the file's, whichever protocol it names.
  const rpcGiven = protocolModules().some((m) => given(optionKey(m) as keyof CheckCliOptions));
  // The file names each protocol's target by the protocol's name, the option by its flag's key (grpc-web, grpcWeb).
  if (!rpcGiven) {
    for (const m of protocolModules()) {
      const address = t[m.name];
      if (typeof address === "string") (out as unknown as Record<string, unknown>)[optionKey(m)] = address;
    }
  }
  if (!given("http") && t.http !== undefined) out.http = t.http;
  if (!given("replica") && t.replicas !== undefined) out.replica = [...t.replicas];
  if (!given("httpReplica") && t["http-replicas"] !== undefined) out.httpReplica = [...t["http-replicas"]];
  const cred = config.credentials ?? {};
  if (!given("apiKey") && cred["api-key-env"] !== undefined) {
    const name = cred["api-key-env"];
    const value = env[name];
    if (value === undefined || value === "")
      throw new ConformanceError(
        "config",
        `${config.file}: credentials.api-key-env names ${name}, which is not set in the environment`,
      );
    out.apiKey = value;
  }
  if (!given("apiKeyIn") && !given("apiKeyHeader") && cred["api-key-in"] !== undefined)
    out.apiKeyIn = cred["api-key-in"];
  const metadataGiven = given("metadata") || given("metadataFromEnv") || given("metadataFile");
  if (!metadataGiven && cred["metadata-env"] !== undefined) out.metadataFromEnv = [...cred["metadata-env"]];
  if (!given("profile") && config.profile !== undefined) out.profile = config.profile;
  if (!given("strict") && config.strict !== undefined) out.strict = config.strict;
  if (!given("only") && config.only !== undefined) out.only = [...config.only];
  if (!given("skip") && config.skip !== undefined) out.skip = [...config.skip];
  return {
    opts: out,
    extras: {
      ...(config.implementation && { implementation: config.implementation }),
      ...(config.claims && { claims: config.claims }),
      expectations: configExpectations(config["expected-failures"] ?? [], config.file, checks),
    },
  };
}
