// The text trace of a check's gRPC exchanges: per call the HEADERS it sent and got, the DATA frames by length with
// the message each decodes to, the trailers, how it ended, and the grpcurl command that repeats it where one can.
// Every line the target's text reaches begins with a marker of ours, and that text is inert.
import type { KeptExchange } from "./recorder.js";
import { describeFrames, type FrameView } from "./_internals/bodies.js";
import type { Inert } from "./_internals/inert.js";
import type { TraceHeaders } from "./exchange-record.js";
import { statusText } from "../protocols/rpc.js";

export interface GrpcTextHeading {
  checkId: string;
  status: string;
  message: string;
  cuts: readonly string[];
}

const VIA: Record<string, string> = {
  "grpc-js":
    "through grpc-js: header blocks and whole messages as the library handed them over, a compressed message " +
    "already inflated",
  "raw-h2": "hand-built over node:http2: the frames as sent and received",
};

function headerLines(mark: string, title: string, headers: TraceHeaders | undefined, inert: Inert): string[] {
  return [`${mark} ${title}`, ...inert.headers(headers).map((h) => `${mark}   ${h.name}: ${h.value}`)];
}

function frameLines(mark: string, frames: ReturnType<typeof describeFrames>, inert: Inert): string[] {
  const line = (f: FrameView, i: number): string => {
    const what =
      f.kind === "trailers"
        ? "trailer frame"
        : `message ${i + 1}, ${(f.flags & 0x01) !== 0 ? "compressed" : "not compressed"}`;
    const shown =
      f.trailers !== undefined
        ? ` ${f.trailers.map((t) => `${t.name}: ${t.value}`).join("; ")}`
        : f.decoded === undefined
          ? ""
          : "message" in f.decoded
            ? ` ${JSON.stringify(f.decoded.message)}`
            : ` not a Message (${String(f.decoded.notAMessage)})`;
    return `${mark} DATA ${5 + f.length} bytes: ${what}, length ${f.length}${shown}`;
  };
  return [
    ...frames.frames.map(line),
    ...(frames.leftover > 0
      ? [`${mark} DATA ${frames.leftover} bytes after the last whole message (a frame cut short)`]
      : []),
    ...(frames.cut ? [`${mark} (cut: the body's later bytes were not kept)`] : []),
  ].map((l) => inert.line(l));
}

function exchangeLines(e: KeptExchange, n: number, total: number, inert: Inert, grpcurl: string | undefined): string[] {
  const out = [
    "",
    `== call ${n} of ${total}: ${inert.line(e.request.method)} ${inert.line(e.request.url)}, ` +
      `${new Date(e.startedAt).toISOString()}, ${Math.round(e.durationMs)} ms`,
    `   (${VIA[e.via ?? "raw-h2"]})`,
    ...headerLines(">", "HEADERS", e.request.headers, inert),
  ];
  if (e.request.body) out.push(...frameLines(">", describeFrames(e.request.body, inert, 1024), inert));
  const res = e.response;
  if (res) {
    out.push(
      ...headerLines("<", `HEADERS${res.status !== undefined ? ` :status ${res.status}` : ""}`, res.headers, inert),
    );
    if (res.body) out.push(...frameLines("<", describeFrames(res.body, inert, 1024), inert));
    if (res.trailers) out.push(...headerLines("<", "HEADERS (trailers)", res.trailers, inert));
  }
  if (e.clientStatus)
    out.push(
      `   status as grpc-js gave it (the target's grpc-status, or the library's own): ` +
        `${inert.line(statusText(e.clientStatus.code, e.clientStatus.details))}`,
    );
  else out.push(`   ended: ${e.failure !== undefined ? inert.line(e.failure) : "end of stream"}`);
  if (grpcurl !== undefined) out.push(`   repeat: ${inert.line(grpcurl)}`);
  return out;
}

export function buildGrpcText(
  exchanges: readonly KeptExchange[],
  heading: GrpcTextHeading,
  inert: Inert,
  grpcurlFor: (e: KeptExchange) => string | undefined,
): string {
  const lines = [
    `# example-conformance trace: ${heading.checkId} (${heading.status})`,
    `# ${inert.line(heading.message)}`,
    "# > sent by the harness, < received from the target; the target's text is shown escaped.",
    ...heading.cuts.map((c) => `# ${c}`),
    ...exchanges.flatMap((e, i) => exchangeLines(e, i + 1, exchanges.length, inert, grpcurlFor(e))),
  ];
  return `${lines.join("\n")}\n`;
}
