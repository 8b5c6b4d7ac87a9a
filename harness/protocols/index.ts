// The protocols an RPC target may speak, one module each: the `Protocol` type, the CLI rows, the one-RPC-target
// rule and the client choice are all read from PROTOCOLS. A new protocol is a folder beside these and one line here.
import { CONNECT, connectProtocol } from "./connect/index.js";
import { GRPC, grpcProtocol } from "./grpc/index.js";
import { GRPC_WEB, grpcWebProtocol } from "./grpc-web/index.js";
import type { ProtocolModule } from "./protocol.js";

export const PROTOCOLS = {
  [GRPC]: grpcProtocol,
  [CONNECT]: connectProtocol,
  [GRPC_WEB]: grpcWebProtocol,
} as const satisfies Readonly<Record<string, ProtocolModule>>;

/** The name of a built-in protocol. */
export type Protocol = keyof typeof PROTOCOLS;

export const PROTOCOL_NAMES = Object.keys(PROTOCOLS) as readonly Protocol[];

/** Protocols added at run time (a test's toy protocol, a plugin): looked up after the built-in ones. */
const registered = new Map<string, ProtocolModule>();

/** Adds a protocol module under its name; returns what removes it again. A built-in name cannot be taken. */
export function registerProtocol(module: ProtocolModule): () => void {
  if (module.name in PROTOCOLS || registered.has(module.name))
    throw new Error(`a protocol named ${module.name} is registered already`);
  registered.set(module.name, module);
  return () => void registered.delete(module.name);
}

/**
 * Every protocol module, built-in ones first in the map's order, then the registered ones: the CLI's rows read this.
 */
export function protocolModules(): readonly ProtocolModule[] {
  return [...Object.values(PROTOCOLS), ...registered.values()];
}

/** The module of a protocol name; undefined when no protocol has that name. */
export function protocolModule(name: string): ProtocolModule | undefined {
  return (PROTOCOLS as Readonly<Record<string, ProtocolModule>>)[name] ?? registered.get(name);
}

export type { HelloAsk, ProtocolModule, TransportSetup, UnaryTransport } from "./protocol.js";
export type { ExchangeObserver, PlainRequest, PlainResponse } from "./http-exchange.js";
