// How a hand-built call ends when the server does not answer it: a RST_STREAM the server sends is a reset (its
// refusal, an answer), while a connection that dies under the call (the process exited) is no answer at all, though
// Node closes the stream with a code of its own (CANCEL) then too. The silence guard tells a dead target by this.
import http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../../contract/message.js";
import { sendRaw } from "../../../../harness/protocols/grpc/raw-h2.js";
import { parseAddress } from "../../../../harness/targets/address.js";

let server: http2.Http2Server;
let address = "";
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = http2.createServer();
  server.on("connection", (socket: Socket) => (sockets.add(socket), socket.on("close", () => sockets.delete(socket))));
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    const path = String(headers[":path"]);
    // As a process that exits: every connection gone at once, nothing sent first.
    if (path === "/die") for (const s of sockets) s.destroy();
    else if (path === "/cancel") stream.close(http2.constants.NGHTTP2_CANCEL);
    else stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const send = (path: string) =>
  sendRaw({ address: parseAddress(address), display: address, metadata: {}, timeoutMs: 4000 }, undefined, {
    path,
    body: encodeMessage("x"),
  });

describe("a hand-built call the server does not answer", () => {
  it("is a connection failure, not a reset, when the connection dies under it", async () => {
    const res = await send("/die");
    expect(res.httpStatus).toBeUndefined();
    expect(res.failure).toMatchObject({
      kind: "connection",
      message: expect.stringMatching(/^the connection closed under the call/),
    });
  });

  it.each([
    ["/cancel", http2.constants.NGHTTP2_CANCEL],
    ["/refuse", http2.constants.NGHTTP2_REFUSED_STREAM],
  ])("is a reset with the server's code when the server resets it (%s)", async (path, code) => {
    const res = await send(path);
    expect(res.failure).toEqual({ kind: "reset", http2Code: code });
  });
});
