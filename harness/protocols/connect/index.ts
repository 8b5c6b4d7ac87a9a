// The Connect protocol's unary calls (connectrpc.com/docs/protocol) over the shared HTTP exchange layer. The only
// file outside this folder may import.
import { parseRpcUrl } from "../../targets/address.js";
import { createHttpRpcTransport } from "../http-rpc.js";
import type { ProtocolModule } from "../protocol.js";
import { connectSpeaks } from "./speaks.js";
import { readConnectReply } from "./codec.js";

export { CONNECT_CODES, readConnectReply } from "./codec.js";

export const connectProtocol: ProtocolModule = {
  name: "connect",
  cli: { flag: "--connect", value: "url", description: "an RPC target spoken to in the Connect protocol: the base URL of its procedures, http://host:port[/prefix] (with or instead of --grpc: the RPC flags combine)" },
  speaks: connectSpeaks,
  needsHttp2Handshake: false,
  endpoint: (address, flag) => parseRpcUrl(address, flag),
  createTransport: (setup) =>
    createHttpRpcTransport(setup, {
      traceAs: "connect",
      request: (message, deadline, metadata) => ({
        headers: { ...metadata, "content-type": "application/proto", "connect-protocol-version": "1", "connect-timeout-ms": String(deadline) },
        body: message,
      }),
      reply: readConnectReply,
    }),
};
