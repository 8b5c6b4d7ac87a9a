// The grpcurl command that sends a gRPC check's failing request without the harness: the request as the check sent
// it (when grpcurl can express it: a Message to Hello), to the address the user gave, with the user's TLS options
// and metadata names; every value of the user's metadata as a placeholder, as in replay lines.
import { join } from "node:path";
import { decodeMessage, encodeMessage } from "../contract/message.js";
import { shellQuote } from "./_internals/shell-quote.js";
import type { RecordedCall } from "./call-recorder.js";
import { GRPC } from "./protocols/grpc/index.js";
import { HELLO_PATH as HELLO } from "./protocols/rpc.js";
import type { GrpcTargetOptions } from "./run-config.js";

/** A request larger than this is not put on a command line: the harness replay sends it. */
const MAX_SHOWN_BODY = 4096;

/** The grpcurl line for a call, or undefined when grpcurl cannot send that request as the check did. */
export function grpcurlCommand(
  call: RecordedCall,
  target: GrpcTargetOptions,
  contractDir: string,
  placeholder: string,
): string | undefined {
  if ((target.protocol ?? GRPC) !== GRPC || target.inMemory) return undefined;
  if ((call.options.path ?? HELLO) !== HELLO || call.request.length > MAX_SHOWN_BODY) return undefined;
  const decoded = decodeMessage(call.request);
  // Only a request grpcurl's JSON says exactly: unknown fields, a body sent though empty, or bytes that are no Message
  // cannot be.
  if (!decoded.ok || !Buffer.from(encodeMessage(decoded.message.body)).equals(Buffer.from(call.request)))
    return undefined;
  const words = ["grpcurl"];
  const tls = target.tls;
  if (!tls) words.push("-plaintext");
  else if (typeof tls === "object") {
    if (tls.caFile !== undefined) words.push("-cacert", tls.caFile);
    if (tls.certFile !== undefined) words.push("-cert", tls.certFile);
    if (tls.keyFile !== undefined) words.push("-key", tls.keyFile);
  }
  if (target.authority !== undefined) words.push("-authority", target.authority);
  words.push("-import-path", contractDir, "-proto", join("example", "example.proto"));
  const userMetadata = new Set(Object.keys(target.metadata ?? {}).map((k) => k.toLowerCase()));
  for (const k of userMetadata) words.push("-H", `${k}: ${placeholder}`);
  for (const [k, v] of Object.entries(call.options.metadata ?? {})) {
    if (userMetadata.has(k.toLowerCase())) continue;
    // grpcurl takes a -bin header's value in base64, as the wire carries it.
    words.push("-H", `${k}: ${typeof v === "string" ? v : Buffer.from(v).toString("base64")}`);
  }
  if (call.options.deadlineMs !== undefined)
    words.push("-max-time", String(Math.max(1, Math.ceil(call.options.deadlineMs / 1000))));
  words.push("-d", JSON.stringify(decoded.message.body === "" ? {} : { body: decoded.message.body }));
  const address = target.address.startsWith("unix://")
    ? target.address.slice("unix://".length)
    : target.address.replace(/^dns:\/\/\//, "");
  if (target.address.startsWith("unix://")) words.push("-unix");
  words.push(address, "example.exampleService/Hello");
  return words.map(shellQuote).join(" ");
}
