// What a hand-built call's time bound measures: the request, from when it can be sent. The connection before it (a
// TLS handshake behind a busy CPU, a slow network) is bounded by the run's timeout, and failing that is a connection
// failure, never a slow answer: a check such as grpc.deadline.respected judges the server's time, not the machine's.
import http2 from "node:http2";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../../contract/message.js";
import { sendRaw } from "../../../../harness/protocols/grpc/raw-h2.js";
import { parseAddress } from "../../../../harness/targets/address.js";
import { selfSignedCert } from "../../../helpers/tls.js";

const tls = selfSignedCert();
let server: http2.Http2SecureServer;
let serverPort = 0;
const fronts: net.Server[] = [];

/** A TCP front that holds each connection's first bytes `delayMs` before passing them on: a slow handshake. */
async function slowFront(delayMs: number): Promise<number> {
  const front = net.createServer((client) => {
    client.on("error", () => undefined);
    client.pause();
    setTimeout(() => {
      const upstream = net.connect(serverPort, "127.0.0.1");
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    }, delayMs);
  });
  fronts.push(front);
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return (front.address() as net.AddressInfo).port;
}

beforeAll(async () => {
  server = http2.createSecureServer({ cert: tls.cert, key: tls.key });
  server.on("stream", (stream, headers) => {
    stream.on("error", () => undefined);
    // /silent never answers; anything else is answered at once.
    if (headers[":path"] === "/silent") return;
    stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  serverPort = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const f of fronts) f.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const send = (port: number, path: string, timeoutMs: number, runTimeoutMs = 4000) =>
  sendRaw(
    {
      address: parseAddress(`127.0.0.1:${port}`),
      display: "",
      metadata: {},
      timeoutMs: runTimeoutMs,
      authority: "localhost",
    },
    { ca: tls.cert },
    { path, body: [{ compressed: false, data: encodeMessage("x") }], timeoutMs },
  );

describe("a hand-built call's time bound", () => {
  it("runs from when the connection is up: a handshake slower than the request's bound is no slow answer", async () => {
    const res = await send(await slowFront(800), "/answer", 300);
    expect(res.failure).toBeUndefined();
    expect(res.httpStatus).toBe(200);
    expect(res.trailers["grpc-status"]).toEqual(["0"]);
  });

  it("still ends a request the server does not answer, by its own bound", async () => {
    const started = performance.now();
    const res = await send(serverPort, "/silent", 300);
    expect(res.failure).toEqual({ kind: "timeout" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("makes a connection that does not come up within the run's timeout a connection failure", async () => {
    const res = await send(await slowFront(60_000), "/answer", 300, 700);
    expect(res.httpStatus).toBeUndefined();
    expect(res.failure).toEqual({ kind: "connection", message: "no connection within 700 ms" });
  });
});
