// The reference gRPC server over real sockets: replies, strict decoding, limits, health, reflection, TLS, shutdown.
import http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeBodyBytes, encodeMessage } from "../../contract/message.js";
import { createGrpcTarget } from "../../harness/targets/create-grpc-target.js";
import { encodeFrames } from "../../harness/protocols/grpc/index.js";
import { startGrpcServer, type GrpcServerHandle } from "../../reference-server/grpc.js";
import { helloReply } from "../../reference-server/hello.js";
import { selfSignedCert } from "../helpers/tls.js";

let server: GrpcServerHandle;
let target: ReturnType<typeof createGrpcTarget>;
beforeAll(async () => {
  server = await startGrpcServer({ port: 0, log: "silent", maxReceiveMessageBytes: 64 * 1024 });
  target = createGrpcTarget({ address: server.address, timeoutMs: 3000 });
});
afterAll(async () => {
  await target.close();
  await server.close();
});

const bodyOf = (bytes: Uint8Array | undefined) => {
  const d = decodeMessage(bytes ?? new Uint8Array());
  if (!d.ok) throw new Error(d.reason);
  return d.message.body;
};

describe("reference gRPC server", () => {
  it.each(["", "world", "Grüße 🌍", "a\u0000b"])("replies helloReply(%j)", async (body) => {
    const res = await target.unary(encodeMessage(body));
    expect(res.code).toBe(0);
    expect(bodyOf(res.response)).toBe(helloReply(body));
  });

  it("gives body absent and body explicitly empty one meaning", async () => {
    const absent = await target.unary(new Uint8Array());
    const explicit = await target.unary(new Uint8Array([0x0a, 0x00]));
    expect(bodyOf(explicit.response)).toBe(bodyOf(absent.response));
  });

  it("accepts unknown fields and replies as without them", async () => {
    const w = new BinaryWriter();
    w.tag(7, WireType.Varint).int32(1);
    w.raw(encodeMessage("x"));
    w.tag(9, WireType.LengthDelimited).string("newer");
    const res = await target.unary(w.finish());
    expect(bodyOf(res.response)).toBe(helloReply("x"));
  });

  it("refuses invalid UTF-8 with INVALID_ARGUMENT instead of replacing it", async () => {
    const res = await target.unary(encodeBodyBytes(new Uint8Array([0xc0, 0xaf])));
    expect(res.code).toBe(3);
  });

  it("refuses a truncated message with INTERNAL instead of cutting it short", async () => {
    const res = await target.unary(new Uint8Array([0x0a, 0x05, 0x61]));
    expect(res.code).toBe(13);
  });

  it("refuses a request past its receive limit with RESOURCE_EXHAUSTED", async () => {
    const res = await target.unary(encodeMessage("x".repeat(65 * 1024)));
    expect(res.code).toBe(8);
  });

  it("serves a gzip-compressed request", async () => {
    const res = await target.raw({
      headers: { "grpc-encoding": "gzip" },
      body: [{ compressed: true, data: gzipSync(encodeMessage("zipped")) }],
    });
    expect(res.trailers["grpc-status"]).toEqual(["0"]);
    expect(bodyOf(res.frames[0]?.data)).toBe(helloReply("zipped"));
  });

  it("answers the health service: SERVING", async () => {
    const res = await target.unary(
      new BinaryWriter().tag(1, WireType.LengthDelimited).string("example.exampleService").finish(),
      {
        path: "/grpc.health.v1.Health/Check",
      },
    );
    expect(res.code).toBe(0);
    const r = new BinaryReader(res.response ?? new Uint8Array());
    const [no] = r.tag();
    expect([no, r.int32()]).toEqual([1, 1]); // status = SERVING
  });

  it("lists example.exampleService through server reflection", async () => {
    const res = await target.raw({
      path: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
      body: [{ compressed: false, data: new BinaryWriter().tag(7, WireType.LengthDelimited).string("*").finish() }],
    });
    const names: string[] = [];
    const outer = new BinaryReader(res.frames[0]?.data ?? new Uint8Array());
    while (outer.pos < outer.len) {
      const [no, wt] = outer.tag();
      if (no !== 6) {
        outer.skip(wt, no);
        continue;
      }
      const list = new BinaryReader(outer.bytes());
      while (list.pos < list.len) {
        list.tag();
        const svc = new BinaryReader(list.bytes());
        svc.tag();
        names.push(svc.string());
      }
    }
    expect(names).toContain("example.exampleService");
    expect(names).toContain("grpc.health.v1.Health");
  });
});

describe("shutdown", () => {
  it("lets an in-flight call finish, then refuses new ones", async () => {
    const s = await startGrpcServer({ port: 0, log: "silent" });
    const session = http2.connect(`http://${s.address}`);
    const stream = session.request({
      ":method": "POST",
      ":path": "/example.exampleService/Hello",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    const status = new Promise<string | undefined>((resolve) =>
      stream.on("trailers", (t) => resolve(t["grpc-status"] as string)),
    );
    stream.write(Buffer.alloc(0));
    // The call is open: headers sent, no message yet. A PING sent after the HEADERS frame is answered only once the
    // server has read that frame (frames of a connection are read in order), however slow the machine is; a fixed
    // pause was not enough on a loaded machine, where close() came first and the call was never served.
    // (A ping sent before the connection is up is cancelled, so the connection comes first.)
    if (session.connecting) await new Promise((resolve) => session.once("connect", resolve));
    await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
    const closing = s.close();
    await new Promise((r) => setTimeout(r, 50));
    stream.end(Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage("in flight") }])));
    expect(await status).toBe("0");
    expect(bodyOf(Buffer.concat(chunks).subarray(5))).toBe(helloReply("in flight"));
    session.close();
    await closing;
    const late = createGrpcTarget({ address: s.address, timeoutMs: 1000 });
    expect((await late.unary(encodeMessage("late"))).code).toBe(14); // UNAVAILABLE: nobody listens
    await late.close();
  });
});

describe("TLS", () => {
  it("serves over TLS with a certificate the client trusts", async () => {
    const { certFile: cert, keyFile: key } = selfSignedCert();
    const s = await startGrpcServer({ port: 0, log: "silent", tls: { certFile: cert, keyFile: key } });
    const tls = createGrpcTarget({
      address: s.address,
      tls: { caFile: cert },
      authority: "localhost",
      timeoutMs: 3000,
    });
    try {
      const res = await tls.unary(encodeMessage("secure"));
      expect(res.code).toBe(0);
      expect(bodyOf(res.response)).toBe(helloReply("secure"));
      const plain = createGrpcTarget({ address: s.address, timeoutMs: 1000 });
      expect((await plain.unary(encodeMessage("x"))).code).not.toBe(0);
      await plain.close();
    } finally {
      await tls.close();
      await s.close();
    }
  });
});
