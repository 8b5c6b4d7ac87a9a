// A fresh channel's call that ends while its connection is still being set up leaves no connection open: against a
// target that trickles its HTTP/2 SETTINGS one byte at a time, the call ends by its deadline and the connection is
// dropped (grpc-js's close() alone leaves it open while the SETTINGS are due). So do connections opened ahead for
// fresh calls and never taken, whether the asking is given back or the client closed, and the shared channel's
// connection once the client is closed.
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../../common/message.js";
import { GrpcJsClient } from "../../../../harness/protocols/grpc/grpc-js-client.js";
import { Status } from "../../../../harness/protocols/rpc.js";
import { parseAddress } from "../../../../harness/targets/address.js";

/** The server's preface, an empty SETTINGS frame: never all of it within the call's deadline. */
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
const BYTE_EVERY_MS = 200;

let server: net.Server;
let address = "";
const open = new Set<net.Socket>();
let accepted = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    accepted++;
    open.add(socket);
    socket.on("error", () => undefined);
    socket.resume();
    let sent = 0;
    // One byte short of the whole frame, then nothing: the handshake never ends.
    const timer = setInterval(() => {
      if (sent < SETTINGS.length - 1 && !socket.destroyed) socket.write(SETTINGS.subarray(sent, ++sent));
    }, BYTE_EVERY_MS);
    socket.on("close", () => (clearInterval(timer), open.delete(socket)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of open) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const newClient = () =>
  new GrpcJsClient({ address: parseAddress(address), display: address, metadata: {}, timeoutMs: 10_000 }, undefined);

describe("a fresh channel's call ended while its connection is being set up", () => {
  it("leaves no connection open", async () => {
    const client = newClient();
    const before = accepted;
    try {
      const result = await client.unary(encodeMessage("hello"), { channel: "fresh", deadlineMs: 500 });
      expect(result.code).toBe(Status.DEADLINE_EXCEEDED);
      expect(accepted - before).toBe(1);
      // Well before grpc-js's own connect timeout (20 s), and with the server still trickling.
      await expect.poll(() => open.size, { timeout: 5_000 }).toBe(0);
    } finally {
      client.close();
    }
  });

  it("leaves no connection open that was opened ahead and never taken, once the asking is given back", async () => {
    const client = newClient();
    const before = accepted;
    try {
      const give = client.openAhead(3, 3);
      await expect.poll(() => accepted - before, { timeout: 5_000 }).toBe(3);
      give();
      await expect.poll(() => open.size, { timeout: 5_000 }).toBe(0);
    } finally {
      client.close();
    }
  });

  it("leaves no connection open that was opened ahead and never taken, once the client is closed", async () => {
    const client = newClient();
    const before = accepted;
    client.openAhead(2, 2);
    await expect.poll(() => accepted - before, { timeout: 5_000 }).toBe(2);
    client.close();
    await expect.poll(() => open.size, { timeout: 5_000 }).toBe(0);
  });

  it("leaves no connection of the shared channel open that was still being set up when the client closed", async () => {
    const client = newClient();
    const before = accepted;
    const result = await client.unary(encodeMessage("hello"), { deadlineMs: 500 });
    expect(result.code).toBe(Status.DEADLINE_EXCEEDED);
    expect(accepted - before).toBe(1);
    client.close();
    await expect.poll(() => open.size, { timeout: 5_000 }).toBe(0);
  });
});
