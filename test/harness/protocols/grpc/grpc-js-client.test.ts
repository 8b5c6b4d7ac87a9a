// The grpc-js client's fresh calls with connections opened ahead: the connections open before the calls, at most the
// bound at once, each carries exactly one call, and those not taken are closed when the asking is given back.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../../common/message.js";
import { GrpcJsClient } from "../../../../harness/protocols/grpc/grpc-js-client.js";
import { parseAddress } from "../../../../harness/targets/address.js";

let server: http2.Http2Server;
let address = "";
/** Per connection: the calls it carried, and whether it has closed. */
const sessions: { streams: number; closed: boolean }[] = [];

beforeAll(async () => {
  server = http2.createServer();
  server.on("session", (session) => {
    const record = { streams: 0, closed: false };
    sessions.push(record);
    session.on("close", () => (record.closed = true));
    session.on("stream", (stream) => {
      record.streams++;
      stream.on("error", () => undefined);
      // An empty Message, OK: what is counted is where each call went.
      stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
      stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const client = () =>
  new GrpcJsClient({ address: parseAddress(address), display: address, metadata: {}, timeoutMs: 10_000 }, undefined);

describe("fresh calls on connections opened ahead", () => {
  it("opens them before the calls, within the bound, and each carries one call", async () => {
    const c = client();
    const before = sessions.length;
    const give = c.openAhead(4, 2);
    // Two connect before any call is made: the bound, not the four asked for.
    await expect.poll(() => sessions.length - before, { timeout: 10_000 }).toBe(2);
    for (let i = 0; i < 4; i++) expect((await c.unary(encodeMessage(`call ${i}`), { channel: "fresh" })).code).toBe(0);
    give();
    const mine = sessions.slice(before);
    expect(mine.map((s) => s.streams)).toEqual([1, 1, 1, 1]);
    // Each fresh channel is closed after its one call.
    await expect.poll(() => mine.every((s) => s.closed), { timeout: 10_000 }).toBe(true);
    c.close();
  });

  it("closes those not taken when the asking is given back, having carried no call", async () => {
    const c = client();
    const before = sessions.length;
    const give = c.openAhead(3, 8);
    await expect.poll(() => sessions.length - before, { timeout: 10_000 }).toBe(3);
    expect((await c.unary(encodeMessage("one"), { channel: "fresh" })).code).toBe(0);
    give();
    const mine = sessions.slice(before);
    await expect.poll(() => mine.every((s) => s.closed), { timeout: 10_000 }).toBe(true);
    expect(mine.map((s) => s.streams)).toEqual([1, 0, 0]);
    c.close();
  });

  it("sends calls on the shared connection without taking one opened ahead", async () => {
    const c = client();
    const before = sessions.length;
    const give = c.openAhead(1, 8);
    await expect.poll(() => sessions.length - before, { timeout: 10_000 }).toBe(1);
    expect((await c.unary(encodeMessage("shared"))).code).toBe(0);
    // The shared channel opened a connection of its own for its call; the one opened ahead carried none.
    expect(sessions.slice(before).map((s) => s.streams)).toEqual([0, 1]);
    expect((await c.unary(encodeMessage("fresh"), { channel: "fresh" })).code).toBe(0);
    give();
    c.close();
    expect(sessions.slice(before).map((s) => s.streams)).toEqual([1, 1]);
  });
});
