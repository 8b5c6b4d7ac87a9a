// What each protocol's set-up probe counts as its own reply, read from replies as data (no sockets): another
// protocol's or a plain server's reply is refused with what it was; a defect the checks judge, an error of the
// protocol itself, and a guard's 401/403/429 are not.
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { connectAnswer, connectJsonAnswer, connectSpeaks } from "../../../harness/protocols/connect/speaks.js";
import { grpcAnswer } from "../../../harness/protocols/grpc/speaks.js";
import { frame } from "../../../harness/protocols/grpc-web/index.js";
import { grpcWebAnswer } from "../../../harness/protocols/grpc-web/speaks.js";
import type { PlainResponse } from "../../../harness/protocols/http-exchange.js";
import type { RawResponse } from "../../../harness/protocols/rpc.js";

const text = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));
const plain = (
  status: number,
  type: string | undefined,
  body: Uint8Array = new Uint8Array(),
  more: Record<string, string[]> = {},
): PlainResponse => ({
  status,
  headers: { ...(type !== undefined && { "content-type": [type] }), ...more },
  body,
});
const raw = (
  httpStatus: number | undefined,
  headers: Record<string, string[]>,
  trailers: Record<string, string[]> = {},
): RawResponse => ({
  ...(httpStatus !== undefined && { httpStatus }),
  headers,
  trailers,
  trailersOnly: false,
  frames: [],
  leftover: 0,
});
const SPEAKS = { speaks: true };

describe("Connect's probe", () => {
  it.each([
    ["the message, application/proto", plain(200, "application/proto", encodeMessage("hi"))],
    [
      "the message labelled application/octet-stream (a defect connect.unary.content-type judges)",
      plain(200, "application/octet-stream", encodeMessage("hi")),
    ],
    ["a Connect error: unimplemented", plain(404, "application/json", text('{"code":"unimplemented","message":"no"}'))],
    ["a Connect error with charset", plain(500, "application/json; charset=utf-8", text('{"code":"internal"}'))],
    ["a guard's 401 in plain text", plain(401, "text/plain", text("unauthorized"))],
    ["a guard's 429", plain(429, "text/html", text("<h1>slow down</h1>"))],
    [
      "no reply in time (the run judges silence)",
      { headers: {}, body: new Uint8Array(), failure: { kind: "timeout" } } satisfies PlainResponse,
    ],
  ])("speaks: %s", (_, res) => expect(connectAnswer(res)).toEqual(SPEAKS));

  it.each([
    [
      "a JSON document on 200",
      plain(200, "application/json", text('{"messages":[]}')),
      'HTTP 200 application/json "{\\"messages\\":[]}"',
    ],
    [
      "a page on 404",
      plain(404, "text/html", text("<html>not found</html>")),
      'HTTP 404 text/html "<html>not found</html>"',
    ],
    [
      "a JSON error without a code",
      plain(404, "application/json", text('{"error":"not found"}')),
      'HTTP 404 application/json "{\\"error\\":\\"not found\\"}"',
    ],
    [
      "a gRPC-Web reply",
      plain(200, "application/grpc-web+proto", new Uint8Array(), { "grpc-status": ["0"] }),
      "HTTP 200 application/grpc-web+proto, empty, a gRPC-Web reply",
    ],
    [
      "a 200 with no content-type whose body is no message",
      plain(200, undefined, text("hello")),
      'HTTP 200 with no content-type "hello"',
    ],
    [
      "Node's HTTP/2-only TLS port to a client without ALPN h2",
      plain(403, "text/plain", text("Missing ALPN Protocol, expected `h2`")),
      'HTTP 403 text/plain "Missing ALPN Protocol, expected `h2`": an HTTP/2-only TLS port, as a gRPC server\'s is',
    ],
  ])("refused: %s", (_, res, answered) => expect(connectAnswer(res)).toEqual({ speaks: false, answered }));

  it("no HTTP/1.1 reply at all is said as such, for the probe to ask what the port speaks instead", () => {
    expect(
      connectAnswer({
        headers: {},
        body: new Uint8Array(),
        failure: { kind: "connection", message: "Parse Error: Expected HTTP/" },
      }),
    ).toEqual({
      speaks: false,
      noReply: true,
      answered: "no HTTP/1.1 reply (Parse Error: Expected HTTP/)",
    });
  });
});

describe("Connect's probe of a server of the JSON codec alone", () => {
  /** A transport whose exchange answers by the request's content-type, recording what was asked. */
  const byType = (answers: Record<string, PlainResponse>) => {
    const asked: string[] = [];
    return {
      asked,
      transport: {
        raw: undefined as never,
        exchange: async (req: { headers?: Record<string, string> }) => {
          const type = req.headers?.["content-type"] ?? "";
          asked.push(type);
          return answers[type] ?? plain(500, "text/plain", text("unexpected"));
        },
      },
    };
  };

  it("is asked again in JSON after a 415, and speaks when the JSON reply is a message or a Connect error", async () => {
    for (const reply of [
      plain(200, "application/json", text('{"body":"Hello x"}')),
      plain(404, "application/json", text('{"code":"unimplemented"}')),
    ]) {
      const { asked, transport } = byType({
        "application/proto": plain(415, "text/plain", text("unsupported")),
        "application/json": reply,
      });
      expect(await connectSpeaks.ask(transport as never, 1000)).toEqual(SPEAKS);
      expect(asked).toEqual(["application/proto", "application/json"]);
    }
  });

  it("is refused when the JSON reply is not Connect's either, and not asked again on another refusal", async () => {
    const page = byType({
      "application/proto": plain(415, "text/plain", text("unsupported")),
      "application/json": plain(404, "text/html", text("<html>no</html>")),
    });
    expect(await connectSpeaks.ask(page.transport as never, 1000)).toEqual({
      speaks: false,
      answered: 'HTTP 404 text/html "<html>no</html>"',
    });
    const notFound = byType({ "application/proto": plain(404, "text/html", text("<html>no</html>")) });
    expect((await connectSpeaks.ask(notFound.transport as never, 1000)).speaks).toBe(false);
    expect(notFound.asked).toEqual(["application/proto"]);
  });

  it("reads a JSON message on 200 as Connect's, a JSON array or text as not", () => {
    expect(connectJsonAnswer(plain(200, "application/json", text("{}")))).toEqual(SPEAKS);
    expect(connectJsonAnswer(plain(200, "application/json", text("[]"))).speaks).toBe(false);
    expect(connectJsonAnswer(plain(200, "application/json", text("nope"))).speaks).toBe(false);
  });
});

describe("gRPC-Web's probe", () => {
  const trailerFrame = frame(0x80, text("grpc-status: 12\r\ngrpc-message: no\r\n"));
  it.each([
    ["application/grpc-web+proto", plain(200, "application/grpc-web+proto", trailerFrame)],
    [
      "application/grpc+proto (a defect grpc-web.content-type judges)",
      plain(200, "application/grpc+proto", trailerFrame),
    ],
    [
      "a grpc-status in the headers alone (trailers-only)",
      plain(200, "application/octet-stream", new Uint8Array(), { "grpc-status": ["12"] }),
    ],
    ["a grpc-status in a trailer frame under another label", plain(200, "application/octet-stream", trailerFrame)],
    ["a guard's 403", plain(403, "text/plain", text("forbidden"))],
  ])("speaks: %s", (_, res) => expect(grpcWebAnswer(res)).toEqual(SPEAKS));

  it.each([
    [
      "a JSON document",
      plain(200, "application/json", text("[]")),
      'HTTP 200 application/json "[]", with no grpc-status',
    ],
    [
      "a Connect error",
      plain(415, "application/json", text('{"code":"unimplemented"}')),
      'HTTP 415 application/json "{\\"code\\":\\"unimplemented\\"}", with no grpc-status',
    ],
    [
      "a proxy's 502 page",
      plain(502, "text/html", text("<html>502</html>")),
      'HTTP 502 text/html "<html>502</html>", with no grpc-status',
    ],
    [
      "Node's HTTP/2-only TLS port to a client without ALPN h2",
      plain(403, "text/plain", text("Missing ALPN Protocol")),
      'HTTP 403 text/plain "Missing ALPN Protocol": an HTTP/2-only TLS port, as a gRPC server\'s is',
    ],
  ])("refused: %s", (_, res, answered) => expect(grpcWebAnswer(res)).toEqual({ speaks: false, answered }));
});

describe("gRPC's probe (after the HTTP/2 handshake)", () => {
  it.each([
    ["application/grpc with trailers", raw(200, { "content-type": ["application/grpc"] }, { "grpc-status": ["0"] })],
    [
      "application/json with a grpc-status (a defect grpc.unary.single-response judges)",
      raw(200, { "content-type": ["application/json"] }, { "grpc-status": ["0"] }),
    ],
    [
      "application/grpc with no trailers (a defect the checks judge)",
      raw(200, { "content-type": ["application/grpc+proto"] }),
    ],
    ["a guard's 401", raw(401, { "content-type": ["text/plain"] })],
    ["no reply at all (a reset: the checks judge it)", raw(undefined, {})],
  ])("speaks: %s", (_, res) => expect(grpcAnswer(res)).toEqual(SPEAKS));

  it.each([
    [
      "an HTTP/2 JSON API",
      raw(200, { "content-type": ["application/json"] }),
      "HTTP 200 application/json (0 bytes) and no grpc-status",
    ],
    [
      "a proxy's 502 page",
      { ...raw(502, { "content-type": ["text/html"] }), leftover: 120 },
      "HTTP 502 text/html (120 bytes) and no grpc-status",
    ],
  ])("refused: %s", (_, res, answered) => expect(grpcAnswer(res)).toEqual({ speaks: false, answered }));
});
