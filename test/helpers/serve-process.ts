// `serve` in a process of its own and the clients that attack it or stand by, for the reference server's attack
// tests: a crash is seen as a crash, and bystanders come from 127.0.0.2, another loopback address, as a second
// client host would.
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { encodeMessage } from "../../common/message.js";
import { PACKAGE_ROOT } from "../../common/paths.js";
import { rawH2, type RawH2Connection } from "./h2-frames.js";

export interface Served {
  child: ChildProcess;
  grpcPort: number;
  httpPort: number;
  stderr(): string;
  exited: Promise<number | null>;
}

const running: Served[] = [];
const opened: Array<{ destroy(): void }> = [];

/** Kills every server and closes every connection this module opened: for afterEach. */
export function cleanUp(): void {
  for (const c of opened.splice(0)) c.destroy();
  for (const s of running.splice(0)) s.child.kill("SIGKILL");
}

/**
 * `serve` on free ports (in memory unless a store is given), optionally under a lower open-file limit and with
 * options for node itself; resolves once both ports are printed.
 */
export async function serve(args: string[] = [], fileLimit?: number, nodeArgs: string[] = []): Promise<Served> {
  const argv = [
    ...nodeArgs,
    `${PACKAGE_ROOT}/bin/example-conformance.js`,
    "serve",
    "--grpc-port",
    "0",
    "--http-port",
    "0",
    "--log-level",
    "silent",
    ...(args.includes("--store") || args.includes("--data-dir") ? [] : ["--store", "memory:"]),
    ...args,
  ];
  const child =
    fileLimit === undefined
      ? spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "pipe"] })
      : spawn("/bin/sh", ["-c", `ulimit -n ${fileLimit} && exec "$0" "$@"`, process.execPath, ...argv], {
          stdio: ["ignore", "pipe", "pipe"],
        });
  let err = "";
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const ports = await new Promise<{ grpcPort: number; httpPort: number }>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const g = /grpc 127\.0\.0\.1:(\d+)/.exec(out);
      const h = /http http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (g?.[1] && h?.[1]) resolve({ grpcPort: Number(g[1]), httpPort: Number(h[1]) });
    });
    child.once("exit", () => reject(new Error(`serve exited before listening: ${out} ${err}`)));
  });
  const served = { child, ...ports, stderr: () => err, exited };
  running.push(served);
  return served;
}

/** How long a bystander waits for its answer by default: the bound the attack tests hold the server to. */
export const BYSTANDER_BOUND_MS = 1000;

export const HELLO = "/example.exampleService/Hello";
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  /** grpc-status, or "no answer: ..." when none came within the bound. */
  status: string;
  ms: number;
  /** grpc-retry-pushback-ms, when the answer asked the client to wait before it retries. */
  pushbackMs?: string;
}

/**
 * One Hello on a new connection from `localAddress`, bounded by `withinMs`, with `metadata` beside the usual headers.
 */
export function hello(
  port: number,
  withinMs = BYSTANDER_BOUND_MS,
  localAddress = "127.0.0.2",
  metadata: Record<string, string> = {},
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let pushbackMs: string | undefined;
    const done = (status: string) => {
      clearTimeout(timer);
      session.destroy();
      resolve({ status, ms: Math.round(performance.now() - t0), ...(pushbackMs !== undefined && { pushbackMs }) });
    };
    const session = http2.connect(`http://127.0.0.1:${port}`, {
      createConnection: () => net.connect({ port, host: "127.0.0.1", localAddress }),
    });
    session.on("error", (e) => done(`no answer: ${e.message}`));
    session.on("close", () => done("no answer: connection closed"));
    const timer = setTimeout(() => done(`no answer within ${withinMs} ms`), withinMs);
    const req = session.request({
      ":method": "POST",
      ":path": HELLO,
      "content-type": "application/grpc",
      te: "trailers",
      ...metadata,
    });
    req.on("error", (e) => done(`no answer: ${e.message}`));
    let headerStatus: string | undefined;
    req.on("response", (h) => {
      headerStatus = h["grpc-status"] as string | undefined;
      pushbackMs = h["grpc-retry-pushback-ms"] as string | undefined;
    });
    req.on("trailers", (t) => {
      pushbackMs ??= t["grpc-retry-pushback-ms"] as string | undefined;
      done(String(t["grpc-status"]));
    });
    req.on("end", () => done(headerStatus ?? "no answer: no grpc-status"));
    req.resume();
    const body = encodeMessage("still there?");
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(body.length, 1);
    req.end(Buffer.concat([prefix, Buffer.from(body)]));
  });
}

/** One HTTP GET on a new connection from `localAddress`, bounded by `withinMs`: the status, or why there was none. */
export function get(
  port: number,
  path: string,
  withinMs = BYSTANDER_BOUND_MS,
  localAddress = "127.0.0.2",
  headers: Record<string, string> = {},
): Promise<{ status: string; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve) => {
    const req = http.get(
      { host: "127.0.0.1", port, path, localAddress, agent: false, timeout: withinMs, headers },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: String(res.statusCode), headers: res.headers, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${withinMs} ms`)));
    req.on("error", (e) => resolve({ status: `no answer: ${e.message}`, headers: {}, body: "" }));
  });
}

export function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024;
}

export async function connect(port: number): Promise<RawH2Connection> {
  const c = await rawH2(port);
  opened.push(c);
  return c;
}

export function connectHttp(port: number): Promise<net.Socket> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    opened.push(socket);
    socket.on("error", () => undefined);
    socket.once("connect", () => resolve(socket));
    socket.once("close", () => resolve(socket));
  });
}

export function post(port: number, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: "/messages",
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** One HTTP DELETE: its status. */
export function del(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "DELETE", agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/**
 * Connections the server on `port` holds open (ESTABLISHED or CLOSE_WAIT) to clients at `peer`, from the kernel's
 * table (/proc/net/tcp): a client that never reads does not notice that the server closed its connection, the
 * kernel does.
 */
export function heldConnections(port: number, peer = "127.0.0.1"): number {
  const peerHex = peer
    .split(".")
    .map((n) => Number(n).toString(16).toUpperCase().padStart(2, "0"))
    .reverse()
    .join("");
  const localPort = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(
      ([, local, remote, state]) =>
        local?.endsWith(localPort) && remote?.startsWith(`${peerHex}:`) && (state === "01" || state === "08"),
    ).length;
}

/** A raw HTTP/2 connection with options (its SETTINGS, its source address), closed by cleanUp. */
export async function connectRaw(port: number, options: Parameters<typeof rawH2>[1]): Promise<RawH2Connection> {
  const c = await rawH2(port, options);
  opened.push(c);
  return c;
}
