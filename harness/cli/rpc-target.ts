// The RPC targets the flags name, read from PROTOCOLS: each protocol's option is its module's CLI flag, each given
// at most once; a run may name several (one a protocol), all behind its one budget. The option rows are built from
// the map too, so a protocol's flag needs no line here or in the option tables.
import { PROTOCOLS, protocolModules, type Protocol, type ProtocolModule } from "../protocols/index.js";
import { withoutCredentials } from "../_internals/url-credentials.js";
import type { OptionSpec } from "./option-table.js";

/** A name in commander's spelling: grpc-web is grpcWeb. */
type CamelCase<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<CamelCase<B>>}` : S;

/** The options key of a built-in protocol (each one's flag is --NAME; test/harness/rpc-target.test.ts holds it). */
export type RpcOptionKey = CamelCase<Protocol>;

/** The address each built-in protocol's flag gave, keyed as commander files it. */
export type RpcTargetOptions = { [K in RpcOptionKey]?: string };

/** The options key of a protocol's flag, as commander names it: --grpc-web is grpcWeb. */
export function optionKey(module: Pick<ProtocolModule, "cli">): string {
  return module.cli.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The options key of a built-in protocol, typed: its flag is --NAME (test/harness/rpc-target.test.ts holds it). */
export function builtInOptionKey(protocol: Protocol): RpcOptionKey {
  return optionKey(PROTOCOLS[protocol]) as RpcOptionKey;
}

/** One protocol's option row: its flag, the kind of value it takes, its text; replayed without credentials. */
export function rpcOptionRow(
  module: Pick<ProtocolModule, "cli">,
  description = module.cli.description,
): OptionSpec<string> {
  return { flags: `${module.cli.flag} <${module.cli.value}>`, description, replay: withoutCredentials };
}

/**
 * The option rows of every protocol in the map as it stands now (registered ones too), keyed as commander files them.
 */
export function rpcOptionRows(
  describe: (module: ProtocolModule) => string = (m) => m.cli.description,
): Record<string, OptionSpec<string>> {
  return Object.fromEntries(protocolModules().map((m) => [optionKey(m), rpcOptionRow(m, describe(m))]));
}

export interface NamedRpcTarget {
  protocol: Protocol | (string & {});
  flag: string;
  address: string;
}

/** Every RPC target the flags name, in the map's order: gRPC first, the one a check that applies to all runs over. */
export function rpcTargetsOf(opts: RpcTargetOptions): NamedRpcTarget[] {
  const given = opts as Readonly<Record<string, unknown>>;
  return protocolModules().flatMap((m) => {
    const address = given[optionKey(m)];
    return typeof address === "string" ? [{ protocol: m.name, flag: m.cli.flag, address }] : [];
  });
}
