// readFirstBytes settles once, whichever comes first, and leaves no socket or timer behind.
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFirstBytes, type FirstBytesReader } from "../../../harness/targets/first-bytes.js";

let server: net.Server;
let port = 0;
/** What the server does with the bytes it is sent first: "echo" them, "close", "hold", or "flood" 1 MiB. */
beforeAll(async () => {
  server = net.createServer((socket) => {
    socket.on("error", () => undefined);
    socket.once("data", (d: Buffer) => {
      const mode = d.toString("latin1");
      if (mode === "close") socket.end();
      else if (mode === "flood") socket.write(Buffer.alloc(1024 * 1024, 0x41));
      else if (mode === "echo") socket.write("HTTP/1.1 200 OK\r\n\r\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function reader(send: string, timeoutMs = 5_000): FirstBytesReader<string> & { seen: number[] } {
  const seen: number[] = [];
  return {
    seen,
    connectEvent: "connect",
    timeoutMs,
    connected: () => send,
    read(received) {
      seen.push(received.length);
      return received.length >= 5 ? { answer: `read ${received.subarray(0, 5).toString("latin1")}` } : undefined;
    },
    timedOut: (received) => `timed out after ${received.length} bytes`,
    failed: (err) => `failed: ${err.code}`,
    closed: (received, up) => `closed (up ${up}) after ${received.length} bytes`,
  };
}

describe("readFirstBytes", () => {
  it("answers from the bytes, once, and destroys the socket", async () => {
    const socket = net.connect({ host: "127.0.0.1", port });
    expect(await readFirstBytes(socket, reader("echo"))).toBe("read HTTP/");
    expect(socket.destroyed).toBe(true);
  });

  it("keeps at most 64 bytes of a flood, and settles on the first read that decides", async () => {
    const r = reader("flood");
    expect(await readFirstBytes(net.connect({ host: "127.0.0.1", port }), r)).toBe("read AAAAA");
    expect(Math.max(...r.seen)).toBeLessThanOrEqual(64);
  });

  it("says the peer closed, after the connection was up", async () => {
    expect(await readFirstBytes(net.connect({ host: "127.0.0.1", port }), reader("close"))).toBe(
      "closed (up true) after 0 bytes",
    );
  });

  it("says when nothing came within the bound", async () => {
    expect(await readFirstBytes(net.connect({ host: "127.0.0.1", port }), reader("hold", 200))).toBe(
      "timed out after 0 bytes",
    );
  });

  it("says the connection failed, the connect event never seen", async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const free = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    expect(await readFirstBytes(net.connect({ host: "127.0.0.1", port: free }), reader("x"))).toBe(
      "failed: ECONNREFUSED",
    );
  });

  it("settles with what connected() answers, without sending", async () => {
    const r = { ...reader("never"), connected: () => ({ answer: "refused at connect" }) };
    expect(await readFirstBytes(net.connect({ host: "127.0.0.1", port }), r)).toBe("refused at connect");
  });
});
