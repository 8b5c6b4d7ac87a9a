// The protocol guard in front of grpc-js: each refusal grpc-js does not make, over a real HTTP/2 connection.
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import { parseAddress } from "../../harness/targets/address.js";
import type { ConnectionOptions } from "../../harness/targets/connection.js";
import type { RawRequest } from "../../harness/targets/grpc-target.js";
import { sendRaw } from "../../harness/targets/raw-h2.js";
import { guardGrpcServer, percentEncode } from "../../reference-server/grpc-guard.js";

const HELLO = "/example.exampleService/Hello";
let server: grpc.Server;
let conn: ConnectionOptions;

beforeAll(async () => {
  server = new grpc.Server();
  const pass = (b: Buffer) => b;
  server.addService(
    { Hello: { path: HELLO, requestStream: false, responseStream: false, requestSerialize: pass, requestDeserialize: pass, responseSerialize: pass, responseDeserialize: pass } },
    { Hello: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => cb(null, call.request) },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  guardGrpcServer(server, { paths: new Set([HELLO]), unaryPaths: new Set([HELLO]) });
  conn = { address: parseAddress(`127.0.0.1:${port}`), display: "", metadata: {}, timeoutMs: 3000 };
});
afterAll(() => server.forceShutdown());

const send = (req: RawRequest) => sendRaw(conn, undefined, req);
const message = (compressed = false) => ({ compressed, data: encodeMessage("guarded") });

describe("grpc guard", () => {
  it("lets an ordinary call through to grpc-js", async () => {
    const res = await send({ body: [message()] });
    expect(res.trailers["grpc-status"]).toEqual(["0"]);
    expect(res.frames).toHaveLength(1);
  });

  it("refuses a :method other than POST with HTTP 405", async () => {
    const res = await send({ method: "PUT", body: [message()] });
    expect(res.httpStatus).toBe(405);
    expect(res.headers["allow"]).toEqual(["POST"]);
  });

  it("answers an unknown method with UNIMPLEMENTED and a percent-encoded message", async () => {
    const res = await send({ path: "/example.exampleService/No%Such", body: [message()] });
    expect(res.trailersOnly).toBe(true);
    expect(res.trailers["grpc-status"]).toEqual(["12"]);
    expect(res.trailers["grpc-message"]).toEqual(["unknown method /example.exampleService/No%25Such"]);
  });

  it("answers an unknown grpc-encoding with UNIMPLEMENTED and the encodings it accepts", async () => {
    const res = await send({ headers: { "grpc-encoding": "br" }, body: [message(true)] });
    expect(res.trailers["grpc-status"]).toEqual(["12"]);
    expect(res.trailers["grpc-accept-encoding"]).toEqual(["identity,deflate,gzip"]);
  });

  it("refuses the compressed flag on a call without grpc-encoding with INTERNAL", async () => {
    const res = await send({ body: [message(true)] });
    expect(res.trailers["grpc-status"]).toEqual(["13"]);
  });

  it("refuses a unary call with no request message with UNIMPLEMENTED", async () => {
    const res = await send({ body: [] });
    expect(res.trailers["grpc-status"]).toEqual(["12"]);
  });

  it("still lets grpc-js answer a non-gRPC content-type with 415", async () => {
    const res = await send({ headers: { "content-type": "text/plain" }, body: new Uint8Array([1]) });
    expect(res.httpStatus).toBe(415);
  });
});

describe("percentEncode", () => {
  it("keeps printable ASCII but %, and encodes everything else as UTF-8 bytes", () => {
    expect(percentEncode("a b~")).toBe("a b~");
    expect(percentEncode("50%")).toBe("50%25");
    expect(percentEncode("é\n")).toBe("%C3%A9%0A");
  });
});
