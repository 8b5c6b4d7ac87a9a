// A hand-built call ends when the server ends the stream, even with its body still going out (RFC 9113 8.1): the
// rest is cancelled, not pushed through the server's flow-control window, and the answer is the server's.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import { sendRaw } from "../../harness/protocols/grpc/raw-h2.js";
import { parseAddress } from "../../harness/targets/address.js";

let server: http2.Http2Server;
let address = "";
/** Per request: the bytes of body the server took in, and the code its stream closed with. */
const seen: { bytes: number; rstCode?: number }[] = [];

beforeAll(async () => {
  server = http2.createServer();
  server.on("stream", (stream, headers) => {
    const record: { bytes: number; rstCode?: number } = { bytes: 0 };
    seen.push(record);
    stream.on("data", (c: Buffer) => (record.bytes += c.length));
    stream.on("close", () => (record.rstCode = stream.rstCode));
    stream.on("error", () => undefined);
    // Refuses at once, reading nothing more than the window lets in: a limit decided at the length prefix.
    const path = String(headers[":path"]);
    if (path.endsWith("/Hello")) stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "8", "grpc-message": "too large" }, { endStream: true });
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
