// The Connect protocol's unary calls (connectrpc.com/docs/protocol) over the shared HTTP exchange layer. The only
// file outside this folder may import.
import { parseRpcUrl } from "../../targets/address.js";
import { createHttpRpcTransport } from "../http-rpc.js";
import type { ProtocolModule } from "../protocol.js";
import { connectRecording } from "./recording.js";
import { connectSpeaks } from "./speaks.js";
import { readConnectReply } from "./codec.js";

export { CONNECT_CODES, readConnectReply } from "./codec.js";

/** The Connect protocol's name: what checks declare in `protocols`, the key of PROTOCOLS. */
export const CONNECT = "connect";

export const connectProtocol: ProtocolModule = {
  name: CONNECT,
  cli: {
    flag: "--connect",
    value: "url",
    description:
      "an RPC target spoken to in the Connect protocol: the base URL of its procedures, " +
      "http://host:port[/prefix] (with or instead of --grpc: the RPC flags combine)",
  },
  speaks: connectSpeaks,
  needsHttp2Handshake: false,
  // A unary body is one Message with the proto codec; a JSON one is text.
  recording: connectRecording,
  trace: {
    httpVersion: "HTTP/1.1",
    format: "har",
    bodyShape: (type) => (/^application\/(proto|x-protobuf)\b/.test(type) ? "message" : "other"),
  },
  endpoint: (address, flag) => parseRpcUrl(address, flag),
  createTransport: (setup) =>
    createHttpRpcTransport(setup, {
      traceAs: CONNECT,
      request: (message, deadline, metadata) => ({
        headers: {
          ...metadata,
          "content-type": "application/proto",
          "connect-protocol-version": "1",
          "connect-timeout-ms": String(deadline),
        },
        body: message,
      }),
      reply: readConnectReply,
    }),
};
