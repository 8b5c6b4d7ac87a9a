// A call ends when the server ends the stream, even with its body still going out (RFC 9113 8.1): the rest is not
// pushed through the server's flow-control window, and the answer is the server's. Hand-built (raw-h2) and grpc-js.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../../contract/message.js";
import { GrpcJsClient } from "../../../../harness/protocols/grpc/grpc-js-client.js";
import { sendRaw } from "../../../../harness/protocols/grpc/raw-h2.js";
import { parseAddress } from "../../../../harness/targets/address.js";

let server: http2.Http2Server;
let address = "";
/** Per request: the bytes of body the server took in, and the code its stream closed with. */
const seen: { bytes: number; rstCode?: number }[] = [];
/** Per connection: whether it has closed. */
const sessions: { closed: boolean }[] = [];

beforeAll(async () => {
  server = http2.createServer();
  server.on("session", (session) => {
    const record = { closed: false };
    sessions.push(record);
    session.on("close", () => (record.closed = true));
  });
  server.on("stream", (stream) => {
    const record: { bytes: number; rstCode?: number } = { bytes: 0 };
    seen.push(record);
    stream.on("data", (c: Buffer) => (record.bytes += c.length));
    stream.on("close", () => (record.rstCode = stream.rstCode));
    stream.on("error", () => undefined);
    // Refuses at once, before the body: a limit decided at the length prefix (what comes after is read and dropped).
    stream.respond(
      { ":status": 200, "content-type": "application/grpc", "grpc-status": "8", "grpc-message": "too large" },
      { endStream: true },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("a raw call the server answers before its body is sent", () => {
  it("ends with the server's status, having sent a window or two of its 4 MiB body, not the rest", async () => {
    const conn = { address: parseAddress(address), display: address, metadata: {}, timeoutMs: 4000 };
    const body = encodeMessage("x".repeat(4 * 1024 * 1024));
    const res = await sendRaw(conn, undefined, { body: [{ compressed: false, data: body }] });
    expect(res.failure).toBeUndefined();
    expect(res.trailersOnly).toBe(true);
    expect(res.trailers["grpc-status"]).toEqual(["8"]);
    await expect.poll(() => seen.at(-1)?.rstCode).toBeDefined();
    const last = seen.at(-1) as { bytes: number; rstCode?: number };
    // A window or two (64 KiB each) went out before the answer arrived; not the 4 MiB.
    expect(last.bytes).toBeLessThanOrEqual(512 * 1024);
  });
});

describe("a grpc-js call on a channel of its own that the server refuses before reading its body", () => {
  it("ends with the server's status and stops sending the rest of its 4 MiB", async () => {
    const conn = { address: parseAddress(address), display: address, metadata: {}, timeoutMs: 4000 };
    const client = new GrpcJsClient(conn, undefined);
    const before = sessions.length;
    const res = await client.unary(encodeMessage("x".repeat(4 * 1024 * 1024)), { channel: "fresh" });
    client.close();
    expect(res.code).toBe(8);
    expect(sessions.length).toBe(before + 1);
    await expect.poll(() => sessions.at(-1)?.closed, { timeout: 3000 }).toBe(true);
    // Left to grpc-js, its queued DATA would all go out after the status: the whole 4 MiB.
    expect(seen.at(-1)?.bytes).toBeLessThanOrEqual(1024 * 1024);
  });
});
