// The RPC targets the flags name, read from PROTOCOLS: each protocol's option is its module's CLI flag, each given
// at most once; a run may name several (one a protocol), all behind its one budget.
import { PROTOCOL_NAMES, PROTOCOLS, type Protocol } from "../protocols/index.js";
import type { CheckCliOptions } from "./check-options.js";

/** The options key of a protocol's flag, as commander names it: --grpc-web is grpcWeb. */
export function optionKey(protocol: Protocol): "grpc" | "connect" | "grpcWeb" {
  return PROTOCOLS[protocol].cli.flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()) as "grpc" | "connect" | "grpcWeb";
}

export interface NamedRpcTarget {
  protocol: Protocol;
  flag: string;
  address: string;
}

/** Every RPC target the flags name, in the map's order: gRPC first, the one a check that applies to all runs over. */
export function rpcTargetsOf(opts: Pick<CheckCliOptions, "grpc" | "connect" | "grpcWeb">): NamedRpcTarget[] {
  return PROTOCOL_NAMES.flatMap((protocol) => {
    const address = opts[optionKey(protocol)];
    return address === undefined ? [] : [{ protocol, flag: PROTOCOLS[protocol].cli.flag, address }];
  });
}
