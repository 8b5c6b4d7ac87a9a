// gRPC over HTTP/2: grpc-js for ordinary calls, hand-built HTTP/2 requests for wire checks, gRPC's length-prefixed
// frames. The only file outside this folder may import.
import { parseAddress } from "../../targets/address.js";
import type { ProtocolModule } from "../protocol.js";
import { grpcRecording } from "./recording.js";
import { grpcSpeaks } from "./speaks.js";
import { GrpcJsClient } from "./grpc-js-client.js";
import { sendRaw } from "./raw-h2.js";

export { decodeFrames, encodeFrames, sendRaw } from "./raw-h2.js";
export { probeHandshake, type HandshakeOptions } from "./handshake.js";

/** gRPC's name: what checks declare in `protocols`, the key of PROTOCOLS, the protocol of a target that names none. */
export const GRPC = "grpc";

export const grpcProtocol: ProtocolModule = {
  name: GRPC,
  cli: {
    flag: "--grpc",
    value: "address",
    description: "the gRPC target: host:port, dns:///host:port or unix:///path",
  },
  speaks: grpcSpeaks,
  needsHttp2Handshake: true,
  recording: grpcRecording,
  trace: { httpVersion: "HTTP/2", format: "text", bodyShape: () => "frames" },
  endpoint: (address, flag) => ({ address: parseAddress(address, flag) }),
  createTransport({ conn, tls }) {
    const client = new GrpcJsClient(conn, tls);
    return {
      unary: (request, options) => client.unary(request, options),
      raw: (request) => sendRaw(conn, tls, request),
      openAhead: (count, limit) => client.openAhead(count, limit),
      close: () => client.close(),
    };
  },
};
