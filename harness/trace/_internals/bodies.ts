// What a body says, for a reader: text when it is text, else base64 with the messages decoded beside it (one
// Message for Connect's proto bodies, length-prefixed frames for gRPC and gRPC-Web).
import { decodeMessage } from "../../../contract/message.js";
import { parseFrames, parseTrailerBlock } from "../../protocols/grpc-web/index.js";
import { protocolModule } from "../../protocols/index.js";
import type { TraceProtocol } from "../exchange-record.js";
import type { KeptBody } from "../recorder.js";
import type { Inert } from "./inert.js";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const TEXTUAL = new RegExp(
  "^(text/|application/([\\w.+-]*\\+)?(json|xml)\\b|" +
    "application/(x-www-form-urlencoded|javascript|problem\\+json|grpc-web-text))",
  "i",
);

/** The body as UTF-8 text when its type says text and its bytes are UTF-8; otherwise undefined. */
export function asText(body: KeptBody, contentType: string | undefined): string | undefined {
  if (!TEXTUAL.test(contentType ?? "") && body.bytes.length > 0) return undefined;
  try {
    return strictUtf8.decode(body.bytes);
  } catch {
    // A cut may fall inside a character: the bytes before it are still text.
    if (body.bytes.length < body.size) {
      for (let back = 1; back <= 3; back++) {
        try {
          return strictUtf8.decode(body.bytes.subarray(0, body.bytes.length - back));
        } catch {
          // go on
        }
      }
    }
    return undefined;
  }
}

/** A Message decoded for a reader, or why it is none. */
export function describeMessage(bytes: Uint8Array, inert: Inert, max: number): Record<string, unknown> {
  const d = decodeMessage(bytes);
  if (!d.ok) return { notAMessage: inert.line(d.reason) };
  return {
    message: {
      body: inert.text(d.message.body, max),
      ...(d.message.unknownFields.length > 0 && { unknownFields: d.message.unknownFields }),
    },
  };
}

export interface FrameView {
  kind: "message" | "trailers";
  flags: number;
  length: number;
  decoded?: Record<string, unknown>;
  trailers?: { name: string; value: string }[];
}

/** The length-prefixed frames of a gRPC or gRPC-Web body, and the bytes after the last whole one. */
export function describeFrames(
  body: KeptBody,
  inert: Inert,
  max: number,
): { frames: FrameView[]; leftover: number; cut: boolean } {
  const { frames, leftover } = parseFrames(body.bytes);
  return {
    frames: frames.map((f) => {
      if ((f.flags & 0x80) !== 0) {
        const trailers = Object.entries(parseTrailerBlock(f.data)).flatMap(([name, vs]) =>
          vs.map((value) => ({ name: inert.line(name), value: inert.line(value) })),
        );
        return { kind: "trailers" as const, flags: f.flags, length: f.data.length, trailers };
      }
      // A compressed message is shown as its length: the trace does not inflate what a target sent.
      return {
        kind: "message" as const,
        flags: f.flags,
        length: f.data.length,
        ...((f.flags & 0x01) === 0 && { decoded: describeMessage(f.data, inert, max) }),
      };
    }),
    leftover,
    cut: body.bytes.length < body.size,
  };
}

/** Whether a body of this protocol and type is length-prefixed frames, one Message, or neither: its module says. */
export function bodyShape(protocol: TraceProtocol, contentType: string | undefined): "frames" | "message" | "other" {
  return protocolModule(protocol)?.trace?.bodyShape((contentType ?? "").toLowerCase()) ?? "other";
}

/** The HTTP version a protocol's exchanges go over, as its module says (HTTP resources: HTTP/1.1). */
export const httpVersionOf = (protocol: TraceProtocol): "HTTP/1.1" | "HTTP/2" =>
  protocolModule(protocol)?.trace?.httpVersion ?? "HTTP/1.1";

/** Whether a check's trace shows a protocol's exchanges as text (gRPC's) rather than in a HAR file. */
export const shownAsText = (protocol: TraceProtocol): boolean => protocolModule(protocol)?.trace?.format === "text";
