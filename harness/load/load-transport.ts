// How `load` reaches a target of each protocol in the PROTOCOLS map: the module chosen from the map, then the load
// caller kept for it (harness/load/_internals). A protocol with no load caller (a registered one) is named, exit 2.
import { ConformanceError } from "../errors.js";
import { CONNECT } from "../protocols/connect/index.js";
import { GRPC_WEB } from "../protocols/grpc-web/index.js";
import { PROTOCOLS, type ProtocolModule } from "../protocols/index.js";
import { moduleOf } from "../targets/rpc-endpoint.js";
import type { HttpRpcLoadProtocol } from "./_internals/http-rpc-call.js";

/** The raw HTTP/2 caller (gRPC), or the HTTP/1.1 caller in a protocol's framing (Connect, gRPC-Web). */
export type LoadTransport = { kind: "raw-h2" } | { kind: "http-rpc"; framing: HttpRpcLoadProtocol };

const LOAD_TRANSPORTS = new Map<ProtocolModule, LoadTransport>([
  [PROTOCOLS.grpc, { kind: "raw-h2" }],
  [PROTOCOLS[CONNECT], { kind: "http-rpc", framing: CONNECT }],
  [PROTOCOLS[GRPC_WEB], { kind: "http-rpc", framing: GRPC_WEB }],
]);

/** The load caller of a protocol, by its module in the map. */
export function loadTransportOf(protocol: string): LoadTransport {
  const module = moduleOf(protocol);
  const transport = LOAD_TRANSPORTS.get(module);
  if (transport === undefined) {
    const driven = [...LOAD_TRANSPORTS.keys()].map((m) => m.name).join(", ");
    throw new ConformanceError(
      "usage",
      `${module.cli.flag}: load drives ${driven} and HTTP resources; ${module.name} has no load caller`,
    );
  }
  return transport;
}
