// HAR 1.2 (w3c-webperf har spec, as browsers export it) of a check's exchanges over HTTP: the HTTP resources, the
// Connect protocol and gRPC-Web. Binary bodies are base64 with the messages decoded beside them (`_decoded`, a
// custom field as the format allows); every string of the target's is inert; a cut says so in `comment`.
import { SUITE_VERSION } from "../version.js";
import { asText, bodyShape, describeFrames, describeMessage, httpVersionOf } from "./_internals/bodies.js";
import type { Inert } from "./_internals/inert.js";
import type { TraceHeaders } from "./exchange-record.js";
import type { KeptBody, KeptExchange } from "./recorder.js";

interface HarContent {
  size: number;
  mimeType: string;
  text?: string;
  encoding?: "base64";
  comment?: string;
  _decoded?: unknown;
}

const headerValue = (headers: TraceHeaders | undefined, name: string): string | undefined => {
  const v = Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1];
  return v === undefined ? undefined : Array.isArray(v) ? (v as readonly string[])[0] : String(v);
};

/** A body as HAR content: text when it is text, else base64 with what it decodes to beside it. */
function content(
  e: KeptExchange,
  body: KeptBody | undefined,
  headers: TraceHeaders | undefined,
  inert: Inert,
  maxBody: number,
): HarContent {
  const mimeType = inert.line(headerValue(headers, "content-type") ?? "");
  if (body === undefined) return { size: 0, mimeType };
  const cut =
    body.bytes.length < body.size
      ? {
          comment:
            `cut: the first ${body.bytes.length} of ${body.size} bytes kept (--trace keeps ${maxBody} bytes of a ` +
            `body)`,
        }
      : {};
  const text = asText(body, headerValue(headers, "content-type"));
  if (text !== undefined) return { size: body.size, mimeType, text: inert.text(text, maxBody), ...cut };
  const shape = bodyShape(e.protocol, headerValue(headers, "content-type"));
  const decoded =
    shape === "frames"
      ? describeFrames(body, inert, maxBody)
      : shape === "message" && cut.comment === undefined
        ? describeMessage(body.bytes, inert, maxBody)
        : undefined;
  return {
    size: body.size,
    mimeType,
    text: Buffer.from(body.bytes).toString("base64"),
    encoding: "base64",
    ...cut,
    ...(decoded !== undefined && { _decoded: decoded }),
  };
}

function entry(e: KeptExchange, inert: Inert, maxBody: number): Record<string, unknown> {
  const url = inert.line(e.request.url);
  let queryString: { name: string; value: string }[] = [];
  try {
    queryString = [...new URL(e.request.url).searchParams].map(([name, value]) => ({
      name: inert.line(name),
      value: inert.line(value),
    }));
  } catch {
    // A URL that does not parse keeps its text; it has no query to list.
  }
  const reqContent = content(e, e.request.body, e.request.headers, inert, maxBody);
  const res = e.response;
  const resContent = content(e, res?.body, res?.headers, inert, maxBody);
  return {
    startedDateTime: new Date(e.startedAt).toISOString(),
    time: Math.max(0, Math.round(e.durationMs)),
    request: {
      method: inert.line(e.request.method),
      url,
      httpVersion: httpVersionOf(e.protocol),
      cookies: [],
      headers: inert.headers(e.request.headers),
      queryString,
      ...(e.request.body !== undefined && {
        postData: {
          mimeType: reqContent.mimeType,
          text: reqContent.text ?? "",
          ...(reqContent.encoding && { encoding: reqContent.encoding }),
          ...(reqContent.comment && { comment: reqContent.comment }),
          ...(reqContent._decoded !== undefined && { _decoded: reqContent._decoded }),
        },
      }),
      headersSize: -1,
      bodySize: e.request.body?.size ?? 0,
    },
    response: {
      status: res?.status ?? 0,
      statusText: inert.line(res?.statusText ?? ""),
      httpVersion: httpVersionOf(e.protocol),
      cookies: [],
      headers: [
        ...inert.headers(res?.headers),
        ...inert.headers(res?.trailers).map((h) => ({ ...h, comment: "trailer" })),
      ],
      content: resContent,
      redirectURL: "",
      headersSize: -1,
      bodySize: res?.body?.size ?? -1,
      ...(e.failure !== undefined && { _error: inert.line(e.failure) }),
    },
    cache: {},
    // Only the whole exchange's time is measured: it is all counted as waiting.
    timings: { send: 0, wait: Math.max(0, Math.round(e.durationMs)), receive: 0 },
    _protocol: e.protocol,
    ...(e.clientStatus && { _grpcStatus: { code: e.clientStatus.code, details: inert.line(e.clientStatus.details) } }),
    ...(e.failure !== undefined && { comment: `no whole response: ${inert.line(e.failure)}` }),
  };
}

export interface HarHeading {
  /** What the trace is of: the check, its status and its message (the message inert here). */
  checkId: string;
  status: string;
  message: string;
  /** Lines saying what was left out, if anything. */
  cuts: readonly string[];
}

/** The HAR document, as JSON text with `<` escaped, so that no browser takes the file for markup. */
export function buildHar(
  exchanges: readonly KeptExchange[],
  heading: HarHeading,
  inert: Inert,
  maxBody: number,
): string {
  const log = {
    log: {
      version: "1.2",
      creator: { name: "example-conformance", version: SUITE_VERSION },
      comment: [`${heading.checkId} (${heading.status}): ${inert.line(heading.message)}`, ...heading.cuts].join("\n"),
      entries: exchanges.map((e) => entry(e, inert, maxBody)),
    },
  };
  return `${JSON.stringify(log, null, 2).replace(/</g, "\\u003c")}\n`;
}
