// gRPC-Web's unary calls (grpc/grpc PROTOCOL-WEB.md) over the shared HTTP exchange layer. The only file outside
// this folder may import.
import { parseRpcUrl } from "../../targets/address.js";
import { createHttpRpcTransport } from "../http-rpc.js";
import type { ProtocolModule } from "../protocol.js";
import { grpcWebSpeaks } from "./speaks.js";
import { frame, fromGrpcWeb } from "./codec.js";

export { frame, fromGrpcWeb, parseFrames, parseTrailerBlock } from "./codec.js";

export const grpcWebProtocol: ProtocolModule = {
  name: "grpc-web",
  cli: { flag: "--grpc-web", value: "url", description: "an RPC target spoken to in gRPC-Web: the base URL of its procedures, http://host:port[/prefix] (with or instead of --grpc: the RPC flags combine)" },
  speaks: grpcWebSpeaks,
  needsHttp2Handshake: false,
  endpoint: (address, flag) => parseRpcUrl(address, flag),
  createTransport: (setup) =>
    createHttpRpcTransport(setup, {
      traceAs: "grpc-web",
      request: (message, deadline, metadata) => ({
        headers: { ...metadata, "content-type": "application/grpc-web+proto", "x-grpc-web": "1", "grpc-timeout": `${deadline}m` },
        body: frame(0, message),
      }),
      reply: fromGrpcWeb,
    }),
};
