// What a legal server may refuse a recorded call's length-prefixed body for, and the Message in it: check-client's
// recording side of the framed protocols, gRPC-Web's and gRPC's alike (gRPC's recording side reads it from here).
import { decodeMessage } from "../../../contract/message.js";
import { inflate, isIdentity } from "../../targets/inflate.js";
import type { RecordedCall } from "../protocol.js";
import { parseFrames } from "./codec.js";

/** gRPC's Timeout: at most 8 digits and a unit (PROTOCOL-HTTP2.md); gRPC-Web carries the same header. */
export const GRPC_TIMEOUT = /^\d{1,8}[HMSmun]$/;

/** A recorded header's first value. */
export const firstValue = (call: RecordedCall, name: string): string | undefined => call.headers[name]?.[0];

/** Whether a Message (compressed with `encoding` when `compressed`) decodes: no line when it does. */
export async function messageProblems(
  data: Uint8Array,
  encoding: string | undefined,
  compressed: boolean,
  maxBytes: number,
): Promise<string[]> {
  let bytes = data;
  if (compressed) {
    const inflated = await inflate(data, encoding as string, maxBytes);
    if (!inflated.ok) return [`its message does not decompress with ${encoding}: ${inflated.message}`];
    bytes = inflated.bytes;
  }
  const decoded = decodeMessage(bytes);
  return decoded.ok ? [] : [`its message is not a valid proto3 Message: ${decoded.reason}`];
}

/** The Message's body of one well-formed length-prefixed frame, inflated; undefined when the body is not that. */
export async function framedMessageBody(
  frames: Uint8Array,
  encoding: string | undefined,
  maxBytes: number,
): Promise<string | undefined> {
  const { frames: parsed, leftover } = parseFrames(frames);
  const first = parsed[0];
  if (parsed.length !== 1 || leftover !== 0 || first === undefined) return undefined;
  let data = first.data;
  if (first.flags === 1) {
    if (isIdentity(encoding)) return undefined;
    const inflated = await inflate(data, encoding as string, maxBytes);
    if (!inflated.ok) return undefined;
    data = inflated.bytes;
  } else if (first.flags !== 0) return undefined;
  const decoded = decodeMessage(data);
  return decoded.ok ? decoded.message.body : undefined;
}

/** gRPC's and gRPC-Web's body: exactly one length-prefixed message, compressed only with an encoding named. */
export async function framedProblems(
  body: Uint8Array,
  encoding: string | undefined,
  maxBytes: number,
): Promise<string[]> {
  const { frames, leftover } = parseFrames(body);
  if (leftover !== 0)
    return [`its body is not whole length-prefixed messages (${leftover} bytes left over after ${frames.length})`];
  if (frames.length !== 1) return [`a unary call carries exactly one message; it carries ${frames.length}`];
  const f = frames[0] as { flags: number; data: Uint8Array };
  if (f.flags > 1) return [`its message's flags byte is ${f.flags}: only 0 (plain) or 1 (compressed) are defined`];
  if (f.flags === 1 && isIdentity(encoding))
    return ["its message's compressed flag is set, yet it names no grpc-encoding"];
  return messageProblems(f.data, encoding, f.flags === 1, maxBytes);
}
