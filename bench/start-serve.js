// `example-conformance serve` in a process of its own for the benches, on free ports, read from the lines it prints.
import { spawn } from "node:child_process";

/**
 * `serve` from the CLI at `cli` (bin/example-conformance.js of some build) with `args` after its ports and silent
 * log: its pid, gRPC address, HTTP URL and a close that stops it with SIGTERM and waits for its exit.
 */
export function startServe(cli, args = []) {
  return new Promise((resolve, reject) => {
    const serveArgs = [cli, "serve", "--grpc-port", "0", "--http-port", "0", "--log-level", "silent", ...args];
    const child = spawn(process.execPath, serveArgs, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      const g = /^grpc (\S+)$/m.exec(out);
      const h = /^http (\S+)$/m.exec(out);
      if (g && h)
        resolve({
          pid: child.pid,
          address: g[1],
          httpUrl: h[1],
          close: () => new Promise((r) => (child.once("exit", r), child.kill("SIGTERM"))),
        });
    });
    child.once("exit", (code) => reject(new Error(`serve exited ${code}`)));
  });
}
