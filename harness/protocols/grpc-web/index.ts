// gRPC-Web's unary calls (grpc/grpc PROTOCOL-WEB.md) over the shared HTTP exchange layer. The only file outside
// this folder may import.
import { parseRpcUrl } from "../../targets/address.js";
import { createHttpRpcTransport } from "../http-rpc.js";
import type { ProtocolModule } from "../protocol.js";
import { grpcWebRecording } from "./recording.js";
import { grpcWebSpeaks } from "./speaks.js";
import { frame, fromGrpcWeb } from "./codec.js";

export { frame, fromGrpcWeb, parseFrames, parseTrailerBlock } from "./codec.js";
export { firstValue, framedMessageBody, framedProblems, GRPC_TIMEOUT } from "./recorded-frames.js";

/** gRPC-Web's name: what checks declare in `protocols`, the key of PROTOCOLS. */
export const GRPC_WEB = "grpc-web";

export const grpcWebProtocol: ProtocolModule = {
  name: GRPC_WEB,
  cli: {
    flag: "--grpc-web",
    value: "url",
    description:
      "an RPC target spoken to in gRPC-Web: the base URL of its procedures, http://host:port[/prefix] (with or " +
      "instead of --grpc: the RPC flags combine)",
  },
  speaks: grpcWebSpeaks,
  needsHttp2Handshake: false,
  // Length-prefixed frames, but for the base64 text form, which is shown as the text it is.
  recording: grpcWebRecording,
  trace: {
    httpVersion: "HTTP/1.1",
    format: "har",
    bodyShape: (type) =>
      type.startsWith("application/grpc-web") && !type.startsWith("application/grpc-web-text") ? "frames" : "other",
  },
  endpoint: (address, flag) => parseRpcUrl(address, flag),
  createTransport: (setup) =>
    createHttpRpcTransport(setup, {
      traceAs: GRPC_WEB,
      request: (message, deadline, metadata) => ({
        headers: {
          ...metadata,
          "content-type": "application/grpc-web+proto",
          "x-grpc-web": "1",
          "grpc-timeout": `${deadline}m`,
        },
        body: frame(0, message),
      }),
      reply: fromGrpcWeb,
    }),
};
