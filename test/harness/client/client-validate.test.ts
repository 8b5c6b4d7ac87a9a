// What client.requests.valid holds against a request, one rule at a time: each bad request beside the least change
// that makes it valid, so a rule that stops firing fails its test and a rule that fires on the valid one does too.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { requestName, type RecordedRequest } from "../../../harness/client/recorded-request.js";
import { HELLO_PATH } from "../../../harness/client/recording-servers.js";
import { requestProblems } from "../../../harness/client/validate.js";
import { frame } from "../../../harness/protocols/grpc-web/index.js";
import { registerProtocol } from "../../../harness/protocols/index.js";

const MESSAGE = encodeMessage("from a test");

function request(
  protocol: RecordedRequest["protocol"],
  headers: Record<string, string>,
  body: Uint8Array,
  extra: Partial<RecordedRequest> = {},
): RecordedRequest {
  return {
    n: 1,
    atMs: 0,
    protocol,
    method: "POST",
    path: HELLO_PATH,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [v]])),
    body,
    truncated: false,
    helloIndex: 0,
    answer: "OK",
    ...extra,
  };
}

const grpc = (headers: Record<string, string>, body: Uint8Array) =>
  request("grpc", { "content-type": "application/grpc", te: "trailers", ...headers }, body);

describe("requestProblems", () => {
  it("a compressed flag needs an encoding: set without grpc-encoding it is a problem; named with gzip it is not", async () => {
    const gzipped = frame(1, gzipSync(MESSAGE));
    expect(await requestProblems(grpc({}, gzipped))).toEqual([
      "its message's compressed flag is set, yet it names no grpc-encoding",
    ]);
    expect(await requestProblems(grpc({ "grpc-encoding": "identity" }, gzipped))).toEqual([
      "its message's compressed flag is set, yet it names no grpc-encoding",
    ]);
    expect(await requestProblems(grpc({ "grpc-encoding": "gzip" }, gzipped))).toEqual([]);
  });

  it("each protocol's content-type: a wrong one is named, the protocol's own is valid", async () => {
    const framed = frame(0, MESSAGE);
    expect(await requestProblems(grpc({ "content-type": "application/json" }, framed))).toEqual([
      `content-type "application/json" is not application/grpc or application/grpc+proto`,
    ]);
    expect(await requestProblems(grpc({ "content-type": "application/grpc+proto" }, framed))).toEqual([]);

    const web = (contentType: string) => request("grpc-web", { "content-type": contentType }, framed);
    expect(await requestProblems(web("application/grpc-web+json"))).toEqual([
      `content-type "application/grpc-web+json" is not gRPC-Web's with the proto codec`,
    ]);
    expect(await requestProblems(web("application/grpc-web+proto"))).toEqual([]);

    const connect = (contentType: string) => request("connect", { "content-type": contentType }, MESSAGE);
    expect(await requestProblems(connect("application/grpc"))).toEqual([
      `content-type "application/grpc" is not a Connect unary one (application/proto or application/json)`,
    ]);
    expect(await requestProblems(connect("application/proto"))).toEqual([]);
  });

  it("a frame whose length prefix says more than the body holds is not whole; the same message framed right is", async () => {
    const framed = frame(0, MESSAGE);
    const long = Uint8Array.from(framed);
    new DataView(long.buffer).setUint32(1, MESSAGE.length + 3);
    expect(await requestProblems(grpc({}, long))).toEqual([
      `its body is not whole length-prefixed messages (${framed.length} bytes left over after 0)`,
    ]);
    expect(await requestProblems(request("grpc-web", { "content-type": "application/grpc-web" }, long))).toEqual([
      `its body is not whole length-prefixed messages (${framed.length} bytes left over after 0)`,
    ]);
    expect(await requestProblems(grpc({}, framed))).toEqual([]);
  });

  it("a GET (or HEAD) to a resource carries no payload (part 4.2 rule 11)", async () => {
    const get = (body: Uint8Array) => request("http", {}, body, { method: "GET", path: "/messages", answer: "200" });
    expect(await requestProblems(get(Buffer.from("filter=x")))).toEqual([
      "a GET request carries no payload (part 4.2 rule 11); it carries 8 bytes",
    ]);
    expect(await requestProblems(get(new Uint8Array()))).toEqual([]);
  });

  it(
    "bytes that are not a proto3 Message are named, over gRPC and over Connect's proto codec; the Message's own " +
      "bytes are not",
    async () => {
      // Field 1 as a varint: body is a string, length-delimited.
      const wrongType = Uint8Array.from([0x08, 0x01]);
      // Field 1 says five bytes and two follow.
      const cut = Uint8Array.from([0x0a, 0x05, 0x61, 0x62]);
      expect(await requestProblems(grpc({}, frame(0, wrongType)))).toEqual([
        "its message is not a valid proto3 Message: field 1 has wire type 0, not length-delimited",
      ]);
      const [problem, ...more] = await requestProblems(
        request("connect", { "content-type": "application/proto" }, cut),
      );
      expect(more).toEqual([]);
      expect(problem).toMatch(/^its body is not a valid proto3 Message: /);
      expect(await requestProblems(grpc({}, frame(0, MESSAGE)))).toEqual([]);
      expect(await requestProblems(request("connect", { "content-type": "application/proto" }, MESSAGE))).toEqual([]);
    },
  );

  it("judges a registered protocol's calls by that protocol's recording side, and names them by its title", async () => {
    const unregister = registerProtocol({
      name: "toy-recorded",
      cli: { flag: "--toy-recorded", value: "url", description: "a protocol of this test's" },
      needsHttp2Handshake: false,
      endpoint: () => {
        throw new Error("not reached: no target is made");
      },
      createTransport: () => {
        throw new Error("not reached: no target is made");
      },
      recording: {
        title: "Toy",
        port: "http1",
        contentTypes: /^application\/toy/,
        deadlineHeader: "toy-deadline",
        problems: async (call) => (call.body.length === 0 ? ["an empty toy call"] : []),
      },
    });
    try {
      expect(
        await requestProblems(request("toy-recorded", { "content-type": "application/toy" }, new Uint8Array())),
      ).toEqual(["an empty toy call"]);
      expect(await requestProblems(request("toy-recorded", { "content-type": "application/toy" }, MESSAGE))).toEqual(
        [],
      );
      expect(requestName(request("toy-recorded", {}, MESSAGE), (t) => t)).toMatch(/^request #1 \(Toy POST \/example/);
    } finally {
      unregister();
    }
  });
});
