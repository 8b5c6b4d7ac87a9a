// The reference server under the independent tools that first broke it: h2load (nghttp2) with huge header blocks
// and floods of connections and streams, and wrk on the collection. The process survives, bystanders on 127.0.0.2
// are answered (or refused cleanly) within their deadline throughout, and the worst wait is printed: under a flood
// that saturates a core, node:http2 can leave a new connection's first SETTINGS waiting for seconds (a plain
// node:http2 server does the same), so a one-second bound holds only for the attacks in attacks.test.ts.
// SOAK=1 (npm run soak) runs the long versions.
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import {
  cleanUp,
  get,
  hello,
  HELLO,
  mib,
  post,
  rssBytes,
  serve,
  sleep,
  type Answer,
} from "../helpers/serve-process.js";

afterEach(cleanUp);

const SOAK = process.env.SOAK === "1";
const BYSTANDER_DEADLINE_MS = 10_000;

/** Why a tool cannot run here, or undefined. In CI (.ci/run installs them) a missing tool fails instead. */
function missing(tool: string, pkg: string): string | undefined {
  const found = spawnSync(tool, ["--version"], { encoding: "utf8" });
  if (found.error === undefined) return undefined;
  const reason = `${tool} is not installed (Debian package ${pkg})`;
  if (process.env.CI === "true") throw new Error(reason);
  return reason;
}

/** Runs a tool to its end, bounded; its output for the figures. */
function run(tool: string, args: string[], boundMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(tool, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), boundMs);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** Bystander calls every 100 ms while `attack` runs, each with a 10 s deadline. */
async function whileAttacked<T>(
  port: number,
  attack: Promise<T>,
  call: (port: number, withinMs: number) => Promise<Answer>,
): Promise<{ result: T; answers: Answer[] }> {
  let over = false;
  const answers: Answer[] = [];
  const watching = (async () => {
    while (!over) {
      answers.push(await call(port, BYSTANDER_DEADLINE_MS));
      await sleep(100);
    }
  })();
  const result = await attack;
  over = true;
  await watching;
  return { result, answers };
}

/**
 * Bystanders not answered within their deadline while the flood ran. The short floods of npm test must leave none.
 * The long ones of npm run soak (1,000 connections, wrk for a minute) do leave some on this 2-core machine, as a
 * plain node:http2 server does too: docs/reliability.md gives the figures, and they are only printed.
 */
function duringFlood(unanswered: Answer[]): void {
  if (unanswered.length > 0)
    console.log(`bystanders not answered during the flood: ${unanswered.length}, e.g. ${unanswered[0]?.status}`);
  if (!SOAK) expect(unanswered).toEqual([]);
}

function grpcBodyFile(): string {
  const body = encodeMessage("from h2load");
  const frame = Buffer.alloc(5 + body.length);
  frame.writeUInt32BE(body.length, 1);
  frame.set(body, 5);
  const file = join(tmpdir(), `example-conformance-h2load-${process.pid}.bin`);
  writeFileSync(file, frame);
  return file;
}

const h2loadMissing = missing("h2load", "nghttp2-client");
const wrkMissing = missing("wrk", "wrk");

describe.skipIf(h2loadMissing !== undefined)(`h2load${h2loadMissing ? ` (skipped: ${h2loadMissing})` : ""}`, () => {
  it(
    "60 KB header blocks on many connections and streams: refused, bystanders served, memory bounded",
    async () => {
      const s = await serve();
      const pid = s.child.pid as number;
      const before = rssBytes(pid);
      const [connections, streams] = SOAK ? [200, 256] : [20, 32];
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 100);
      const { result, answers } = await whileAttacked(
        s.grpcPort,
        run(
          "h2load",
          [
            "-n",
            String(connections * streams * 4),
            "-c",
            String(connections),
            "-m",
            String(streams),
            "-d",
            grpcBodyFile(),
            "-H",
            "content-type: application/grpc",
            "-H",
            "te: trailers",
            "-H",
            `x-filler: ${"x".repeat(60_000)}`,
            `http://127.0.0.1:${s.grpcPort}${HELLO}`,
          ],
          SOAK ? 300_000 : 60_000,
        ),
        (port, withinMs) => hello(port, withinMs),
      );
      clearInterval(sampler);
      console.log(
        `h2load, 60 KB headers, ${connections} connections x ${streams} streams: RSS ${mib(before)} before, ` +
          `${mib(peak)} at most; ${/requests: .*/.exec(result.out)?.[0] ?? result.out.slice(-300)}`,
      );
      expect(s.child.exitCode, s.stderr()).toBe(null);
      expect(answers.filter((a) => a.status !== "0" && a.status !== "8")).toEqual([]);
      // Every call was refused before grpc-js saw it: reset by node:http2 once the client has acknowledged the limit,
      // or before that answered trailers-only RESOURCE_EXHAUSTED by the guard, which h2load counts as a 2xx success.
      // Either way no reply was served: a served Hello sends its message in DATA, and no DATA came back.
      expect(result.out).toMatch(/traffic: .*, 0B \(0\) data/);
      expect(peak - before).toBeLessThan(200 * 1024 * 1024);
    },
    SOAK ? 600_000 : 90_000,
  );

  it(
    "more connections than the cap, with many streams each: bystanders from another address are answered",
    async () => {
      const s = await serve();
      const [connections, streams, total] = SOAK ? [1000, 128, 1_280_000] : [300, 20, 60_000];
      const { result, answers } = await whileAttacked(
        s.grpcPort,
        run(
          "h2load",
          [
            "-n",
            String(total),
            "-c",
            String(connections),
            "-m",
            String(streams),
            "-d",
            grpcBodyFile(),
            "-H",
            "content-type: application/grpc",
            "-H",
            "te: trailers",
            `http://127.0.0.1:${s.grpcPort}${HELLO}`,
          ],
          SOAK ? 300_000 : 60_000,
        ),
        (port, withinMs) => hello(port, withinMs),
      );
      console.log(
        `h2load, ${connections} connections x ${streams} streams: bystander's worst wait ` +
          `${Math.max(...answers.map((a) => a.ms))} ms over ${answers.length} calls; ` +
          `${/requests: .*/.exec(result.out)?.[0] ?? result.out.slice(-300)}`,
      );
      expect(s.child.exitCode, s.stderr()).toBe(null);
      expect(answers.length).toBeGreaterThan(0);
      duringFlood(answers.filter((a) => a.status !== "0" && a.status !== "8"));
      expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
    },
    SOAK ? 600_000 : 90_000,
  );
});

describe.skipIf(wrkMissing !== undefined)(`wrk${wrkMissing ? ` (skipped: ${wrkMissing})` : ""}`, () => {
  it(
    "400 connections looping on a 300-message collection: pages keep each answer small, and both ports answer " +
      "bystanders",
    async () => {
      const s = await serve();
      for (let i = 0; i < 300; i++) await post(s.httpPort, JSON.stringify({ body: `stored ${i}` }));
      const seconds = SOAK ? 60 : 4;
      const attack = run(
        "wrk",
        ["-t", "1", "-c", "400", "-d", `${seconds}s`, `http://127.0.0.1:${s.httpPort}/messages`],
        (seconds + 30) * 1000,
      );
      const grpcSide = whileAttacked(s.grpcPort, attack, (port, withinMs) => hello(port, withinMs));
      const httpSide = whileAttacked(s.httpPort, attack, (port, withinMs) => {
        const t0 = performance.now();
        return get(port, "/messages?limit=1", withinMs).then((r) => ({
          status: r.status,
          ms: Math.round(performance.now() - t0),
        }));
      });
      const [{ result, answers }, http] = await Promise.all([grpcSide, httpSide]);
      console.log(
        `wrk, 400 connections on GET /messages for ${seconds} s: ` +
          `${/Requests\/sec:.*/.exec(result.out)?.[0] ?? result.out.slice(-300)}; bystanders' worst wait: gRPC ` +
          `${Math.max(...answers.map((a) => a.ms))} ms, HTTP ${Math.max(...http.answers.map((a) => a.ms))} ms`,
      );
      expect(s.child.exitCode, s.stderr()).toBe(null);
      duringFlood([
        ...answers.filter((a) => a.status !== "0" && a.status !== "8"),
        ...http.answers.filter((a) => a.status !== "200" && a.status !== "503"),
      ]);
      expect(await hello(s.grpcPort)).toMatchObject({ status: "0" });
      expect(await get(s.httpPort, "/messages?limit=1")).toMatchObject({ status: "200" });
    },
    SOAK ? 600_000 : 90_000,
  );
});
