// The reference's HTTP/2 receive windows on its gRPC port: room for the largest request it accepts (the receive limit
// and the message's 5-byte prefix) on each stream and on the connection, so such a request arrives in one round trip
// instead of one per 64 KiB; never below HTTP/2's 65,535. What the peer is allowed to send is read from the client's
// side of the connection (the SETTINGS it received, and its send window on the connection), not from a clock.
import http2 from "node:http2";
import { afterAll, describe, expect, it } from "vitest";
import { encodeFrames } from "../../harness/protocols/grpc/index.js";
import { encodeMessage } from "../../contract/message.js";
import { receiveWindowFor } from "../../reference-server/grpc-guard.js";
import { startGrpcServer, type GrpcServerHandle } from "../../reference-server/grpc.js";

const servers: GrpcServerHandle[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** The windows a client of a server with this receive limit may fill: the stream's initial one and the connection's. */
async function windowsSeen(
  maxReceiveMessageBytes?: number,
): Promise<{ stream: number; connection: number; session: http2.ClientHttp2Session }> {
  const server = await startGrpcServer({
    port: 0,
    log: "silent",
    shutdownGraceMs: 1000,
    ...(maxReceiveMessageBytes !== undefined && { maxReceiveMessageBytes }),
  });
  servers.push(server);
  const session = http2.connect(`http://${server.address}`);
  session.on("error", () => undefined);
  const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve));
  // The connection's window comes in a WINDOW_UPDATE on stream 0 right after the SETTINGS: a ping's answer follows it.
  await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
  return { stream: settings.initialWindowSize ?? 65_535, connection: session.state.remoteWindowSize ?? 0, session };
}

describe("the gRPC port's receive windows", () => {
  it("let a request of the default 4 MiB receive limit, with its prefix, come in one flight, and serve a 2 MiB Hello", async () => {
    const { stream, connection, session } = await windowsSeen();
    try {
      expect(stream).toBe(4 * 1024 * 1024 + 5);
      expect(connection).toBe(4 * 1024 * 1024 + 5);
      const body = "w".repeat(2 * 1024 * 1024);
      const call = session.request({
        ":method": "POST",
        ":path": "/example.exampleService/Hello",
        "content-type": "application/grpc",
        te: "trailers",
      });
      const chunks: Buffer[] = [];
      call.on("data", (c: Buffer) => chunks.push(c));
      const trailers = new Promise<http2.IncomingHttpHeaders>((resolve) => call.once("trailers", resolve));
      call.end(Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage(body) }])));
      expect((await trailers)["grpc-status"]).toBe("0");
      expect(Buffer.concat(chunks).length).toBe(5 + encodeMessage(`Hello, ${body}`).length);
    } finally {
      session.close();
    }
  });

  it("follow the receive limit, and never fall below HTTP/2's 65,535", async () => {
    const small = await windowsSeen(1024);
    small.session.close();
    expect([small.stream, small.connection]).toEqual([65_535, 65_535]);
    const oneMiB = await windowsSeen(1024 * 1024);
    oneMiB.session.close();
    expect([oneMiB.stream, oneMiB.connection]).toEqual([1024 * 1024 + 5, 1024 * 1024 + 5]);
    expect(receiveWindowFor(2 ** 31)).toBe(2 ** 31 - 1);
  });
});
