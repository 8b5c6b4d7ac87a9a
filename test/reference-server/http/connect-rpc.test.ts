// Hello over Connect and gRPC-Web on the reference server's HTTP port: the same replies and refusals as its gRPC port.
import net from "node:net";
import { create, fromBinary, toBinary, type DescService } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exampleService, MessageSchema } from "../../../gen/example/example_pb.js";
import { encodeBodyBytes, encodeMessage } from "../../../contract/message.js";
import { createGrpcTarget } from "../../../harness/targets/create-grpc-target.js";
import { HELLO_RPC } from "../../../reference-server/http/connect-rpc.js";
import { startHttpServer } from "../../../reference-server/http/server.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { MALFORMED } from "../../../suites/grpc/errors-malformed-request.js";
import { connectGet, connectUnary, grpcWebUnary, type RawRpcResult } from "../../helpers/rpc-raw.js";
import { rawRequest } from "../../helpers/http-server.js";
import { cleanUp, serve } from "../../helpers/serve-process.js";

const API_KEY = "rpc-test-key";
const MAX_MESSAGE_BYTES = 64 * 1024;

let server: ReferenceServer;
let grpc: ReturnType<typeof createGrpcTarget>;
beforeAll(async () => {
  server = await startReferenceServer({
    grpcPort: 0,
    httpPort: 0,
    apiKey: API_KEY,
    maxReceiveMessageBytes: MAX_MESSAGE_BYTES,
  });
  grpc = createGrpcTarget({ address: server.grpcAddress, timeoutMs: 5000 });
});
afterAll(async () => {
  await grpc.close();
  await server.close();
});

/** Every way a client reaches Hello on the HTTP port, with connect-node's own clients. */
function httpTransports(baseUrl: string): Array<[string, Transport]> {
  return [
    ["Connect, binary, HTTP/1.1", createConnectTransport({ baseUrl, httpVersion: "1.1" })],
    ["Connect, JSON, HTTP/1.1", createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false })],
    ["Connect GET, binary", createConnectTransport({ baseUrl, httpVersion: "1.1", useHttpGet: true })],
    [
      "Connect GET, JSON",
      createConnectTransport({ baseUrl, httpVersion: "1.1", useHttpGet: true, useBinaryFormat: false }),
    ],
    ["gRPC-Web, binary", createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })],
    ["gRPC-Web, JSON", createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: false })],
  ];
}

/** The service as this server declares Hello (side-effect free), so that a client may use GET. */
const SERVICE_WITH_GET: DescService = { ...exampleService, methods: [HELLO_RPC], method: { hello: HELLO_RPC } };

const BODIES = ["", "world", "Grüße 🌍", "a\u0000b"];

describe("Hello over Connect and gRPC-Web on the HTTP port", () => {
  it.each(BODIES)("answers %j over every protocol with the bytes the gRPC port answers", async (body) => {
    const overGrpc = await grpc.unary(encodeMessage(body));
    expect(overGrpc.code).toBe(0);
    const expected = fromBinary(MessageSchema, overGrpc.response ?? new Uint8Array()).body;
    for (const [name, transport] of httpTransports(server.httpUrl)) {
      const client = createClient(
        name.startsWith("Connect GET") ? (SERVICE_WITH_GET as typeof exampleService) : exampleService,
        transport,
      );
      const reply = await client.hello({ body });
      expect(reply.body, name).toBe(expected);
    }
    for (const call of [connectUnary, grpcWebUnary, connectGet]) {
      const raw = await call(server.httpUrl, encodeMessage(body));
      expect(raw.code, call.name).toBe(0);
      expect(Buffer.from(raw.message ?? []).toString("hex"), call.name).toBe(
        Buffer.from(overGrpc.response ?? []).toString("hex"),
      );
    }
  });

  // A leading U+FEFF is text, not a byte-order mark: both ports keep it (decodeMessage reads with ignoreBOM).
  it("answers a body that begins with U+FEFF as the gRPC port does, keeping the U+FEFF", async () => {
    const overGrpc = await grpc.unary(encodeMessage("\ufeffmark"));
    const overConnect = await connectUnary(server.httpUrl, encodeMessage("\ufeffmark"));
    expect(Buffer.from(overConnect.message ?? []).toString("hex")).toBe(
      Buffer.from(overGrpc.response ?? []).toString("hex"),
    );
    expect(fromBinary(MessageSchema, overGrpc.response ?? new Uint8Array()).body).toBe("Hello, \ufeffmark");
  });

  it("serves a Connect GET, with the message taken from the query", async () => {
    const get = await connectGet(server.httpUrl, encodeMessage("from the query"));
    expect(get.httpStatus).toBe(200);
    expect(fromBinary(MessageSchema, get.message ?? new Uint8Array()).body).toBe("Hello, from the query");
    const json = await fetch(
      `${server.httpUrl}/example.exampleService/Hello?connect=v1&encoding=json&message=${encodeURIComponent('{"body":"q"}')}`,
    );
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toBe("application/json");
    expect(await json.json()).toEqual({ body: "Hello, q" });
  });

  it("answers in each protocol's own content type", async () => {
    expect((await connectUnary(server.httpUrl, encodeMessage("x"))).contentType).toBe("application/proto");
    expect((await grpcWebUnary(server.httpUrl, encodeMessage("x"))).contentType).toBe("application/grpc-web+proto");
  });

  it("does not ask for the API key, as the gRPC port does not, while the resources still do", async () => {
    // The raw calls above send no key; here the refusal of the resources is the contrast.
    expect((await connectUnary(server.httpUrl, encodeMessage("k"))).code).toBe(0);
    expect((await rawRequest(server.httpUrl, { path: "/messages" })).status).toBe(401);
    expect((await rawRequest(server.httpUrl, { path: "/messages", headers: { "x-api-key": API_KEY } })).status).toBe(
      200,
    );
  });

  it("sends an error of Connect's own JSON shape, not the resources' error representation", async () => {
    const res = await fetch(`${server.httpUrl}/example.exampleService/Hello`, {
      method: "POST",
      headers: { "content-type": "application/proto" },
      body: new Uint8Array(MALFORMED[0]!.bytes),
    });
    expect(res.headers.get("content-type")).toBe("application/json");
    const error = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(["code", "message"]);
  });
});

/** What the gRPC port and each protocol on the HTTP port answered to the same request bytes. */
async function everyAnswer(
  request: Uint8Array,
): Promise<{ grpc: number; connect: RawRpcResult; get: RawRpcResult; grpcWeb: RawRpcResult }> {
  const overGrpc = await grpc.unary(request);
  return {
    grpc: overGrpc.code,
    connect: await connectUnary(server.httpUrl, request),
    get: await connectGet(server.httpUrl, request),
    grpcWeb: await grpcWebUnary(server.httpUrl, request),
  };
}

describe("the HTTP port refuses what the gRPC port refuses", () => {
  it("accepts unknown fields and replies as without them, like the gRPC port", async () => {
    const w = new BinaryWriter();
    w.tag(7, WireType.Varint).int32(1);
    w.raw(encodeMessage("x"));
    w.tag(9, WireType.LengthDelimited).string("newer");
    const answers = await everyAnswer(w.finish());
    expect(answers.grpc).toBe(0);
    for (const [name, answer] of Object.entries({
      connect: answers.connect,
      get: answers.get,
      grpcWeb: answers.grpcWeb,
    })) {
      expect(answer.code, name).toBe(0);
      expect(fromBinary(MessageSchema, answer.message ?? new Uint8Array()).body, name).toBe("Hello, x");
    }
  });

  const invalidUtf8 = [[0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff, 0xfe]];
  it.each(invalidUtf8.map((bytes) => Buffer.from(bytes).toString("hex")))(
    "refuses a body with invalid UTF-8 (%s)",
    async (hex) => {
      const answers = await everyAnswer(encodeBodyBytes(Buffer.from(hex, "hex")));
      expect(answers.grpc).toBe(Code.InvalidArgument);
      // connect-es reports every binary parse failure, invalid UTF-8 included, as INTERNAL: refused all the same.
      for (const [name, answer] of Object.entries({
        connect: answers.connect,
        get: answers.get,
        grpcWeb: answers.grpcWeb,
      })) {
        expect([Code.InvalidArgument, Code.Internal], name).toContain(answer.code);
      }
    },
  );

  it("refuses invalid UTF-8 in a JSON body with INVALID_ARGUMENT, as the gRPC port does in binary", async () => {
    const body = Buffer.concat([Buffer.from('{"body":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]);
    for (const [type, framed] of [
      ["application/json", body],
      ["application/grpc-web+json", Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body])],
    ] as const) {
      const res = await fetch(`${server.httpUrl}/example.exampleService/Hello`, {
        method: "POST",
        headers: { "content-type": type },
        body: framed,
      });
      const text = await res.text();
      if (type === "application/json") {
        expect(res.status, type).toBe(400);
        expect(JSON.parse(text), type).toMatchObject({ code: "invalid_argument" });
      } else {
        expect(res.headers.get("grpc-status") ?? /grpc-status:\s*(\d+)/.exec(text)?.[1], type).toBe(
          String(Code.InvalidArgument),
        );
      }
    }
  });

  it.each(MALFORMED.map((m) => m.what))("refuses a malformed message: %s", async (what) => {
    const malformed = MALFORMED.find((m) => m.what === what)!;
    const answers = await everyAnswer(new Uint8Array(malformed.bytes));
    expect(answers.grpc).toBe(Code.Internal);
    for (const [name, answer] of Object.entries({
      connect: answers.connect,
      get: answers.get,
      grpcWeb: answers.grpcWeb,
    })) {
      expect(answer.code, name).toBe(Code.Internal);
    }
  });

  it("refuses field 1 sent with another wire type", async () => {
    const answers = await everyAnswer(new Uint8Array([0x08, 0x01]));
    expect(answers.grpc).not.toBe(0);
    for (const [name, answer] of Object.entries({
      connect: answers.connect,
      get: answers.get,
      grpcWeb: answers.grpcWeb,
    })) {
      expect(answer.code, name).toBe(answers.grpc);
    }
  });

  it("refuses a message past the gRPC port's receive limit with RESOURCE_EXHAUSTED, and serves one within it", async () => {
    const over = encodeMessage("x".repeat(MAX_MESSAGE_BYTES + 1));
    expect((await grpc.unary(over)).code).toBe(Code.ResourceExhausted);
    expect((await connectUnary(server.httpUrl, over)).code).toBe(Code.ResourceExhausted);
    expect((await grpcWebUnary(server.httpUrl, over)).code).toBe(Code.ResourceExhausted);
    const within = encodeMessage("x".repeat(MAX_MESSAGE_BYTES - 16));
    expect((await grpc.unary(within)).code).toBe(0);
    expect((await connectUnary(server.httpUrl, within)).code).toBe(0);
    expect((await grpcWebUnary(server.httpUrl, within)).code).toBe(0);
  });

  it("answers the same through connect-node's clients: a refusal is a ConnectError, never a reply", async () => {
    const over = "x".repeat(MAX_MESSAGE_BYTES + 1);
    const viaGrpc = createClient(exampleService, createGrpcTransport({ baseUrl: `http://${server.grpcAddress}` }));
    for (const [name, transport] of [
      ["gRPC port", undefined],
      ...httpTransports(server.httpUrl).filter(([n]) => !n.startsWith("Connect GET")),
    ] as const) {
      const client = transport === undefined ? viaGrpc : createClient(exampleService, transport);
      const error = await client.hello(create(MessageSchema, { body: over })).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(error?.code, name).toBe(Code.ResourceExhausted);
    }
    expect(toBinary(MessageSchema, create(MessageSchema, { body: "" })).length).toBe(0);
  });
});

describe("the HTTP port's protections cover the RPC routes", () => {
  it("answers a Connect or gRPC-Web request whose body trickles in with 408, as it does a resource's", async () => {
    const http = await startHttpServer({ port: 0, log: "silent", requestTimeoutMs: 500 });
    try {
      for (const type of ["application/proto", "application/grpc-web+proto"]) {
        const socket = net.connect(http.port, "127.0.0.1");
        let answer = "";
        socket.on("data", (c: Buffer) => (answer += c.toString("latin1")));
        socket.on("error", () => undefined);
        // gRPC-Web's body opens with a frame header that announces the 195 bytes to come: what trickles is its payload.
        const prefix = type.includes("grpc-web") ? "\x00\x00\x00\x00\xc3" : "";
        socket.write(
          Buffer.from(
            `POST /example.exampleService/Hello HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: ` +
              `200\r\n\r\n${prefix}`,
            "latin1",
          ),
        );
        const drip = setInterval(() => socket.destroyed || socket.write("\x0a"), 100);
        const closed = new Promise<boolean>((r) => socket.once("close", () => r(true)));
        try {
          expect(
            await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]),
            type,
          ).toBe(true);
          expect(answer, type).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
        } finally {
          clearInterval(drip);
          socket.destroy();
        }
      }
    } finally {
      await http.close();
    }
  }, 30_000);
});

describe("`serve`", () => {
  it("serves Connect and gRPC-Web on --http-port, open without the key, bounded by --max-message-bytes", async () => {
    const served = await serve(["--api-key", API_KEY, "--max-message-bytes", "1024"]);
    try {
      const url = `http://127.0.0.1:${served.httpPort}`;
      const client = createClient(exampleService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
      expect((await client.hello({ body: "served" })).body).toBe("Hello, served");
      expect((await grpcWebUnary(url, encodeMessage("served"))).code).toBe(0);
      expect((await connectUnary(url, encodeMessage("x".repeat(1100)))).code).toBe(Code.ResourceExhausted);
      expect((await rawRequest(url, { path: "/messages" })).status).toBe(401);
    } finally {
      served.child.kill("SIGTERM");
      await served.exited;
      cleanUp();
    }
  }, 30_000);
});
