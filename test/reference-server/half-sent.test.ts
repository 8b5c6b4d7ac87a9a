// Requests the server holds before they are whole, against `serve` in its own process with small limits: half-sent
// requests (all but their last bytes, never ended) on connections whose windows are shut, and whole 1 MiB requests
// admitted a hundred at a time, with bystanders from 127.0.0.2. The bounds are outcomes (RSS, which streams end and
// how, who is served), never how fast the machine is; the one clock asserted is the product's "served again within
// 5 s", with an allowance for a loaded machine.
import { afterEach, describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import { encodeFrames } from "../../harness/protocols/grpc/index.js";
import {
  FLAG,
  FRAME,
  frame,
  goawayCode,
  grpcRequestHeaders,
  H2_ERROR,
  SETTING,
  type RawH2Connection,
  type SendOutcome,
} from "../helpers/h2-frames.js";
import { recordReliability } from "../helpers/reliability-results.js";
import {
  cleanUp,
  connectHttp,
  connectRaw,
  get,
  hello,
  HELLO,
  mib,
  rssBytes,
  serve,
  sleep,
  type Answer,
  type Served,
} from "../helpers/serve-process.js";

afterEach(cleanUp);

const MIB = 1024 * 1024;
/** A Hello request of a little under 1 MiB, framed: within a receive limit of 1 MiB. */
const REQUEST = Buffer.from(encodeFrames([{ compressed: false, data: encodeMessage("a".repeat(MIB - 16)) }]));
/** What a half-sent request leaves out: its last bytes, so grpc-js waits for them with the rest held. */
const LEFT_OUT = 64;
/** The windows of a client that reads nothing: every stream's initial window 0. */
const SHUT = { settings: [[SETTING.INITIAL_WINDOW_SIZE, 0]] } as const;
/** Streams per attacking connection: the server allows 100. */
const STREAMS = 100;
/** The product's promise once an attack ends, and what a loaded machine (2 cores, load 10) may add to it. */
const SERVED_AGAIN_MS = 5000;
const ALLOWANCE_MS = 3000;
/** RSS counts code, stacks and the allocator's slack that the watermark (heap and external memory) does not. */
const RSS_MARGIN = 128 * MIB;
const STALL_MS = 2000;

describe("half-sent requests on connections whose windows are shut", () => {
  it(
    "count against the connection's share: RSS stays under the watermark, bystanders are served, the stalled " +
      "streams are reset, their connections sent away (GOAWAY), and everyone is served once the attacker leaves",
    async () => {
      const watermark = 128;
      const s = await serve([
        "--max-message-bytes",
        String(MIB),
        "--unread-timeout",
        `${STALL_MS / 1000}s`,
        "--unread-mib-per-connection",
        "4",
        "--unread-mib",
        "16",
        "--memory-watermark-mib",
        String(watermark),
      ]);
      const watch = watchRss(s);
      const bystanders = standBy(s);
      const attackers = await Promise.all(Array.from({ length: 3 }, () => connectRaw(s.grpcPort, SHUT)));
      const started = performance.now();
      const outcomes = await Promise.all(
        attackers.map((c) => halfSend(c, REQUEST.subarray(0, REQUEST.length - LEFT_OUT))),
      );
      // What the server holds once the attacker has sent all it will: the streams it has not reset. ("sent" says only
      // that the client wrote every byte: a stream its last bytes took past the share is reset after.)
      await sleep(300);
      const held = attackers.map((c) => ids().filter((id) => c.ended(id) === undefined).length);
      // Every stream ends, reset; every connection is sent away once its streams have all stalled.
      const closed = await Promise.all(attackers.map((c) => c.closed(STALL_MS + 10_000)));
      const answers = await bystanders.stop();
      const peak = watch.stop();
      const ends = attackers.map((c) => ids().map((id) => c.ended(id)?.rstCode));
      console.log(
        `half-sent: ${outcomes.map((o) => count(o, "sent")).join("/")} sent whole but ${LEFT_OUT} bytes per ` +
          `connection, ${held.join("/")} held; RSS ${mib(watch.before)} before, ${mib(peak)} at most; closed after ` +
          `${Math.round(performance.now() - started)} ms; ${answers.length} bystander rounds, slowest ` +
          `${Math.max(...answers.map((a) => a.ms))} ms`,
      );
      expect(s.child.exitCode, s.stderr()).toBe(null);
      expect(peak).toBeLessThan(watermark * MIB + RSS_MARGIN);
      // 4 MiB of share, a request a little under 1 MiB: four held, and a fifth that took the connection past it.
      for (const h of held) expect(h).toBeLessThanOrEqual(5);
      for (const e of ends) expect(e.filter((code) => code !== H2_ERROR.ENHANCE_YOUR_CALM)).toEqual([]);
      expect(closed).toEqual(attackers.map(() => true));
      expect(attackers.map((c) => goawayCode(c.received()))).toEqual(attackers.map(() => H2_ERROR.ENHANCE_YOUR_CALM));
      expect(answers.filter((a) => a.status !== "0")).toEqual([]);
      const servedAgainMs = await servedAgainAfter(s, attackers);
      // Recorded once the test has held every bound: a failed run's figures do not reach the page.
      recordReliability(
        "half-sent",
        "test/reference-server/half-sent.test.ts",
        floodFigures({ attackers, held, before: watch.before, peak, watermark, answers, servedAgainMs }),
      );
    },
  );

  it("once the attacker leaves, everyone is served within 5 s, though what it left took memory past the watermark", async () => {
    // The watermark below what the owed limits let four connections hold (16 MiB and a request each): past it while
    // they hold it, and under it only once the garbage they leave is collected.
    const watermark = 48;
    const s = await serve([
      "--max-message-bytes",
      String(MIB),
      "--unread-timeout",
      "60s",
      "--memory-watermark-mib",
      String(watermark),
    ]);
    const attackers = await Promise.all(Array.from({ length: 4 }, () => connectRaw(s.grpcPort, SHUT)));
    await Promise.all(attackers.map((c) => halfSend(c, REQUEST.subarray(0, REQUEST.length - LEFT_OUT))));
    await sleep(300);
    const during = await hello(s.grpcPort, SERVED_AGAIN_MS);
    expect(during, "the attack took memory past the watermark: a bystander is shed").toMatchObject({ status: "8" });
    await servedAgainAfter(s, attackers);
  });
});

describe("whole 1 MiB requests, a hundred admitted at once on each connection, replies never read", () => {
  it(
    "count as they come: RSS stays under the watermark, a connection holds at most its share and one call, the " +
      "rest are reset, and bystanders are served",
    async () => {
      const watermark = 128;
      const s = await serve([
        "--max-message-bytes",
        String(MIB),
        "--unread-timeout",
        "60s",
        "--unread-mib-per-connection",
        "4",
        "--unread-mib",
        "32",
        "--memory-watermark-mib",
        String(watermark),
      ]);
      const watch = watchRss(s);
      const bystanders = standBy(s);
      const attackers = await Promise.all(Array.from({ length: 6 }, () => connectRaw(s.grpcPort, SHUT)));
      const outcomes = await Promise.all(attackers.map((c) => halfSend(c, REQUEST, true)));
      // The server's sweep counts the replies held within 100 ms; give it a few.
      await sleep(500);
      const answers = await bystanders.stop();
      const peak = watch.stop();
      const held = attackers.map((c) => ids().filter((id) => c.ended(id) === undefined).length);
      const reset = attackers.map(
        (c) => ids().filter((id) => c.ended(id)?.rstCode === H2_ERROR.ENHANCE_YOUR_CALM).length,
      );
      console.log(
        `whole requests: ${outcomes.map((o) => count(o, "sent")).join("/")} sent whole per connection, ` +
          `${held.join("/")} held, ${reset.join("/")} reset; RSS ${mib(watch.before)} before, ${mib(peak)} at most`,
      );
      expect(s.child.exitCode, s.stderr()).toBe(null);
      expect(peak).toBeLessThan(watermark * MIB + RSS_MARGIN);
      // Each held call counts its reply and the request grpc-js keeps twice, 3 MiB: one under the share of 4 MiB, and
      // the one that takes the connection past it.
      for (const [i, h] of held.entries()) {
        expect(h).toBeLessThanOrEqual(2);
        expect(h + (reset[i] as number)).toBe(STREAMS);
      }
      expect(answers.filter((a) => a.status !== "0")).toEqual([]);
      const servedAgainMs = await servedAgainAfter(s, attackers);
      recordReliability(
        "whole-requests-unread",
        "test/reference-server/half-sent.test.ts",
        floodFigures(
          { attackers, held, before: watch.before, peak, watermark, answers, servedAgainMs },
          { resetMin: Math.min(...reset) },
        ),
      );
    },
  );
});

describe("a request that trickles in, a byte at a time, each within the stall bound", () => {
  /** The stall bound, which each byte beats, and the bound on a request's whole arrival, which the trickle passes. */
  const STALL = "2s";
  const ARRIVAL_MS = 5000;
  /** A byte this often, far within the stall bound; at most TRICKLE_BYTES of them, so the loop ends by itself. */
  const TRICKLE_EVERY_MS = 400;
  const TRICKLE_BYTES = 50;

  it(
    "on the gRPC port: its stream is reset (ENHANCE_YOUR_CALM) once --request-timeout has passed since it began, " +
      "and a bystander is served meanwhile",
    async () => {
      const s = await serve(["--unread-timeout", STALL, "--request-timeout", `${ARRIVAL_MS}ms`]);
      const c = await connectRaw(s.grpcPort, { localAddress: "127.0.0.1" });
      const id = 1;
      // A Hello whose message is announced as 1,000 bytes, then sent one byte at a time.
      const prefix = Buffer.from([0, 0, 0, 0x03, 0xe8]);
      await c.write(
        frame(FRAME.HEADERS, FLAG.END_HEADERS, id, grpcRequestHeaders(HELLO)),
        frame(FRAME.DATA, 0, id, prefix),
      );
      const began = performance.now();
      let sent = 0;
      const bystander = hello(s.grpcPort, SERVED_AGAIN_MS);
      while (sent < TRICKLE_BYTES && c.ended(id) === undefined && !c.socket.destroyed) {
        await sleep(TRICKLE_EVERY_MS);
        await c.write(frame(FRAME.DATA, 0, id, Buffer.from("a")));
        sent++;
      }
      const end = c.ended(id);
      console.log(
        `trickled gRPC request: ${sent} bytes sent, one every ${TRICKLE_EVERY_MS} ms; ` +
          `${end === undefined ? "never reset" : `reset (code ${end.rstCode}) ${Math.round(end.at - began)} ms after it began`}`,
      );
      expect(
        end,
        `the stream was not reset after ${sent} bytes, ${Math.round(performance.now() - began)} ms`,
      ).toBeDefined();
      expect(end?.rstCode).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
      // The bound on its arrival ended it, not the stall bound: it lasted longer than that, and bytes kept coming.
      expect((end?.at ?? 0) - began).toBeGreaterThan(ARRIVAL_MS - 500);
      expect((await bystander).status).toBe("0");
      expect(s.child.exitCode, s.stderr()).toBe(null);
    },
  );

  it(
    "on the HTTP port: a body trickling in gets 408 and its connection closed once --request-timeout has passed, " +
      "and a bystander is served meanwhile",
    async () => {
      const s = await serve(["--unread-timeout", STALL, "--request-timeout", `${ARRIVAL_MS}ms`]);
      const socket = await connectHttp(s.httpPort);
      let answer = "";
      socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
      socket.write(
        "POST /messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
      );
      let sent = 0;
      const bystander = get(s.httpPort, "/", SERVED_AGAIN_MS);
      while (sent < TRICKLE_BYTES && answer === "" && !socket.destroyed) {
        await sleep(TRICKLE_EVERY_MS);
        socket.write(" ");
        sent++;
      }
      const closed = await new Promise<boolean>((resolve) => {
        if (socket.destroyed) return resolve(true);
        const timer = setTimeout(() => resolve(false), SERVED_AGAIN_MS);
        socket.once("close", () => (clearTimeout(timer), resolve(true)));
      });
      console.log(
        `trickled HTTP body: ${sent} bytes sent, one every ${TRICKLE_EVERY_MS} ms; answered ` +
          `${JSON.stringify(answer.slice(0, 12))}, closed: ${closed}`,
      );
      expect(answer.slice(0, 12)).toBe("HTTP/1.1 408");
      expect(closed).toBe(true);
      expect(sent * TRICKLE_EVERY_MS).toBeGreaterThan(ARRIVAL_MS - 1000);
      expect((await bystander).status).toBe("200");
    },
  );
});

const ids = (): number[] => Array.from({ length: STREAMS }, (_, i) => 1 + 2 * i);
const count = (outcomes: SendOutcome[], which: SendOutcome): number => outcomes.filter((o) => o === which).length;

/** Opens STREAMS Hello streams on `c` at once, then sends `payload` on every one together (ended when `end`). */
/** A flood's figures for the reliability page, in the page's order; `extra` goes after the streams held. */
function floodFigures(
  f: {
    attackers: readonly unknown[];
    held: readonly number[];
    before: number;
    peak: number;
    watermark: number;
    answers: readonly Answer[];
    servedAgainMs: number;
  },
  extra: Record<string, number> = {},
): Record<string, number> {
  return {
    connections: f.attackers.length,
    streams: STREAMS,
    heldMax: Math.max(...f.held),
    ...extra,
    rssBeforeMiB: Math.round(f.before / MIB),
    rssMaxMiB: Math.round(f.peak / MIB),
    watermarkMiB: f.watermark,
    bystanderRounds: f.answers.length,
    slowestHelloMs: Math.max(...f.answers.map((a) => a.ms)),
    servedAgainMs: f.servedAgainMs,
  };
}

async function halfSend(c: RawH2Connection, payload: Buffer, end = false): Promise<SendOutcome[]> {
  await c.write(...ids().map((id) => frame(FRAME.HEADERS, FLAG.END_HEADERS, id, grpcRequestHeaders(HELLO))));
  return Promise.all(ids().map((id) => c.sendData(id, payload, { endStream: end, withinMs: 20_000 })));
}

/** The server's RSS every 100 ms from now: the most, and what it was before. */
function watchRss(s: Served): { before: number; stop(): number } {
  const pid = s.child.pid as number;
  const before = rssBytes(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, s.child.exitCode === null ? rssBytes(pid) : 0)), 100);
  return {
    before,
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** A Hello from 127.0.0.2 every 250 ms, each on a new connection and given 5 s, until stopped: their answers. */
function standBy(s: Served): { stop(): Promise<Answer[]> } {
  const answers: Answer[] = [];
  let going = true;
  const loop = (async () => {
    while (going) {
      answers.push(await hello(s.grpcPort, SERVED_AGAIN_MS));
      await sleep(250);
    }
  })();
  return {
    async stop() {
      going = false;
      await loop;
      return answers;
    },
  };
}

/**
 * Closes the attacker's connections and asserts everyone is served again, its own address too, on both ports,
 * within the product's 5 s and the allowance: asked again every 100 ms until then.
 */
async function servedAgainAfter(s: Served, attackers: RawH2Connection[]): Promise<number> {
  for (const c of attackers) c.destroy();
  const gone = performance.now();
  let last: string[] = [];
  while (performance.now() - gone < SERVED_AGAIN_MS + ALLOWANCE_MS) {
    const [a, b, h] = await Promise.all([
      hello(s.grpcPort, SERVED_AGAIN_MS, "127.0.0.1"),
      hello(s.grpcPort, SERVED_AGAIN_MS),
      get(s.httpPort, "/", SERVED_AGAIN_MS),
    ]);
    last = [a.status, b.status, h.status];
    if (last.join() === "0,0,200") break;
    await sleep(100);
  }
  const after = Math.round(performance.now() - gone);
  console.log(`served again ${after} ms after the attacker left`);
  expect(last, `answers ${after} ms after the attacker left`).toEqual(["0", "0", "200"]);
  return after;
}
