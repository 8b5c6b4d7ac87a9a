// `load` against a server that ends connections as deployments do (GOAWAY after N calls, as nginx's
// keepalive_requests; a maximum connection age, as grpc-go's MaxConnectionAge): the connection is replaced, the calls
// it did not process are sent again, the reconnections are counted, and none of it is an error. The replies at rest,
// asked one call at a time before the run, get a new connection for the next call the same way.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { restCaller } from "../../../harness/load/_internals/drive.js";
import { encodeFrames } from "../../../harness/protocols/grpc/index.js";
import { parseAddress } from "../../../harness/targets/address.js";
import { cli } from "../../helpers/cli.js";
import { answerHello } from "../../helpers/slow-grpc.js";

/** A Hello server whose every session is ended gracefully (GOAWAY NO_ERROR, calls under way finished) by `endWhen`. */
async function ending(
  endWhen: (session: http2.ServerHttp2Session, streams: number) => void,
): Promise<{ address: string; sessions: () => number; close(): Promise<void> }> {
  const server = http2.createServer();
  let sessions = 0;
  server.on("session", (session) => {
    sessions++;
    session.on("error", () => undefined);
    let streams = 0;
    session.on("stream", () => endWhen(session, ++streams));
    endWhen(session, 0);
  });
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    stream.resume();
    stream.on("end", () => answerHello(stream));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    sessions: () => sessions,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function loadAgainst(address: string) {
  const json = join(mkdtempSync(join(tmpdir(), "reconnect-")), "load.json");
  const run = await cli([
    "load",
    "--grpc",
    address,
    "--duration",
    "2500ms",
    "--concurrency",
    "8",
    "--connections",
    "2",
    "--json",
    json,
  ]);
  return {
    run,
    report: JSON.parse(readFileSync(json, "utf8")) as {
      requests: number;
      errors: Record<string, number>;
      reconnections?: number;
    },
  };
}

describe("load against a server that ends connections", () => {
  it("GOAWAY after every 20 calls: no errors, the connections replaced and counted", async () => {
    const server = await ending((session, streams) => {
      if (streams === 20) session.close();
    });
    try {
      const { run, report } = await loadAgainst(server.address);
      expect(report.errors, run.stdout + run.stderr).toEqual({});
      expect(run.code).toBe(0);
      expect(report.requests).toBeGreaterThan(40);
      expect(report.reconnections).toBeGreaterThan(0);
      expect(server.sessions()).toBeGreaterThan(2);
      expect(run.stdout).toMatch(/^reconnected {2}\d+ times \(the server ended a connection/m);
    } finally {
      await server.close();
    }
  }, 60_000);

  it("at rest, one call at a time, GOAWAY after every 5 calls: each next call on a new connection, counted", async () => {
    const server = await ending((session, streams) => {
      if (streams === 5) session.close();
    });
    const request = Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage("at rest") }]));
    const rest = restCaller({
      address: parseAddress(server.address),
      requests: [request],
      bodies: ["at rest"],
      atRest: [],
      concurrency: 1,
      connections: 1,
      timeoutMs: 20_000,
      durationMs: 0,
    });
    try {
      const codes: number[] = [];
      for (let k = 0; k < 16; k++) codes.push((await rest.call(0, 0, k)).code);
      expect(codes).toEqual(Array.from({ length: 16 }, () => 0));
      expect(rest.reconnections).toBe(3);
      expect(server.sessions()).toBe(4);
    } finally {
      await rest.close();
      await server.close();
    }
  }, 60_000);

  it("at rest, a call above the last stream of a GOAWAY is refused unprocessed and sent again on the new connection", async () => {
    // Every connection's third call crosses a GOAWAY whose last stream is the one before it: REFUSED_STREAM.
    // node:http2's server does not close a session it sent GOAWAY on by itself: the test closes them.
    const sessions: http2.ServerHttp2Session[] = [];
    const server = await ending((session, streams) => {
      if (streams === 0) sessions.push(session);
      if (streams === 3) session.goaway(http2.constants.NGHTTP2_NO_ERROR, 3);
    });
    const request = Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage("at rest") }]));
    const rest = restCaller({
      address: parseAddress(server.address),
      requests: [request],
      bodies: ["at rest"],
      atRest: [],
      concurrency: 1,
      connections: 1,
      timeoutMs: 20_000,
      durationMs: 0,
    });
    try {
      const results = [];
      for (let k = 0; k < 16; k++) results.push(await rest.call(0, 0, k));
      expect(results.map((r) => `${r.code} ${r.details}`)).toEqual(Array.from({ length: 16 }, () => "0 "));
      // Two calls answered on each connection, the first one's two and then a resent one and a new one.
      expect(server.sessions()).toBe(8);
      expect(rest.reconnections).toBe(7);
    } finally {
      await rest.close();
      for (const session of sessions) session.destroy();
      await server.close();
    }
  }, 60_000);

  it("a connection age of 500 ms: no errors, reconnections counted", async () => {
    const server = await ending((session, streams) => {
      if (streams === 0) setTimeout(() => session.close(), 500).unref();
    });
    try {
      const { run, report } = await loadAgainst(server.address);
      expect(report.errors, run.stdout + run.stderr).toEqual({});
      expect(run.code).toBe(0);
      expect(report.reconnections).toBeGreaterThanOrEqual(2);
    } finally {
      await server.close();
    }
  }, 60_000);
});
