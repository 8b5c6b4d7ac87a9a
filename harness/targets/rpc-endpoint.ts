// Where an RPC target is, by its protocol's address rules: the module chosen from PROTOCOLS, the parsed address,
// and for a protocol over HTTP the base URL its procedures hang from.
import { ConformanceError } from "../errors.js";
import { GRPC } from "../protocols/grpc/index.js";
import { PROTOCOL_NAMES, protocolModule, type ProtocolModule } from "../protocols/index.js";
import type { ParsedAddress } from "./address.js";

/** The module of a protocol name (default gRPC); exit 2 naming the known ones when there is none. */
export function moduleOf(name: string = GRPC): ProtocolModule {
  const module = protocolModule(name);
  if (!module) throw new ConformanceError("usage", `no protocol named ${name}: one of ${PROTOCOL_NAMES.join(", ")}`);
  return module;
}

/** Where an RPC target is: its address, and for a protocol over HTTP the base URL its procedures hang from. */
export function endpointOf(
  options: { address: string; protocol?: string },
  flag?: string,
): { address: ParsedAddress; url?: URL } {
  const module = moduleOf(options.protocol);
  return module.endpoint(options.address, flag ?? module.cli.flag);
}
