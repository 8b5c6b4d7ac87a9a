// gRPC-Web's wire rules (grpc/grpc PROTOCOL-WEB.md): length-prefixed frames, the trailer frame, and how a reply reads.
import { grpcMessage, Status, type UnaryResult } from "../rpc.js";
import type { PlainResponse } from "../http-exchange.js";
import { codeForHttpStatus, failed, inflatedBody } from "../http-rpc.js";

/** One length-prefixed frame: flag byte, 4-byte big-endian length, payload. */
export function frame(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.length);
  out.set(payload, 5);
  return out;
}

/** The frames of a gRPC-Web body, and how many bytes were left over after the last whole one. */
export function parseFrames(body: Uint8Array): { frames: { flags: number; data: Uint8Array }[]; leftover: number } {
  const frames: { flags: number; data: Uint8Array }[] = [];
  let at = 0;
  while (body.length - at >= 5) {
    const length = new DataView(body.buffer, body.byteOffset + at + 1, 4).getUint32(0);
    if (body.length - at - 5 < length) break;
    frames.push({ flags: body[at] as number, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return { frames, leftover: body.length - at };
}

/** gRPC-Web's trailer frame: HTTP/1-style header lines, keys lowercased. */
export function parseTrailerBlock(data: Uint8Array): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const line of Buffer.from(data).toString("latin1").split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    (out[key] ??= []).push(line.slice(colon + 1).trim());
  }
  return out;
}

/** gRPC-Web: messages and then a trailer frame in the body; a trailers-only answer puts grpc-status in the headers. */
export async function fromGrpcWeb(res: PlainResponse, deadline: number): Promise<UnaryResult> {
  const early = failed(res, deadline);
  if (early) return early;
  const { frames } = parseFrames(res.body);
  const data = frames.filter((f) => (f.flags & 0x80) === 0);
  const trailerFrame = frames.find((f) => (f.flags & 0x80) !== 0);
  const trailers = trailerFrame ? parseTrailerBlock(trailerFrame.data) : {};
  const statusSource = trailers["grpc-status"] !== undefined ? trailers : res.headers;
  const raw = statusSource["grpc-status"]?.[0];
  if (raw === undefined) {
    const code = res.status === 200 ? Status.INTERNAL : codeForHttpStatus(res.status as number);
    return {
      code,
      details: res.status === 200 ? "no grpc-status in the trailers or headers" : `HTTP ${res.status}`,
      headers: res.headers,
      trailers,
    };
  }
  const code = /^\d+$/.test(raw) ? Number(raw) : Status.UNKNOWN;
  const details = grpcMessage(statusSource["grpc-message"]?.[0]);
  if (code === Status.OK && data.length !== 1) {
    return {
      code: Status.INTERNAL,
      details: `${data.length} response messages for a unary call`,
      headers: res.headers,
      trailers,
    };
  }
  if (code !== Status.OK) return { code, details, headers: res.headers, trailers };
  const message = data[0] as { flags: number; data: Uint8Array };
  if ((message.flags & 0x01) === 0) return { code, details, response: message.data, headers: res.headers, trailers };
  // The compressed flag: the message is in grpc-encoding, inflated within its bound.
  const inflated = await inflatedBody({ ...res, body: message.data }, res.headers["grpc-encoding"]?.[0] ?? "identity");
  const refused = failed(inflated, deadline);
  if (refused) return { ...refused, trailers };
  return { code, details, response: inflated.body, headers: res.headers, trailers };
}
