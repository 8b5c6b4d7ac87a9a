// The first RPC a fresh reference serves costs what every later one does: what Node and connect-es load on first use
// (Node's bundled undici, for the fetch Headers connect-node makes per request) is loaded by an in-process warm-up
// before the server listens, not by the first client's call (which took 22 ms over gRPC-Web, 2 ms once warm).
// Asserted by the mechanism, not by a clock: a fresh process has undici loaded once startHttpServer resolves, and
// the warm-up's calls leave no request lines in the debug log.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startHttpServer } from "../../reference-server/http/server.js";

const SERVER_JS = fileURLToPath(new URL("../../dist/reference-server/http/server.js", import.meta.url));

describe("the reference's first RPC", () => {
  it(
    "finds what connect-node loads on first use already loaded when the server starts listening (dist: npm run " +
      "build)",
    () => {
      const script = [
        `const { startHttpServer } = await import(${JSON.stringify(SERVER_JS)});`,
        "const undici = () => process.moduleLoadList.some((m) => m.includes('deps/undici/undici'));",
        "const before = undici();",
        "const server = await startHttpServer({ port: 0, log: 'silent' });",
        "console.log(JSON.stringify({ before, after: undici() }));",
        "await server.close();",
      ].join("\n");
      const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        encoding: "utf8",
        timeout: 30_000,
      });
      expect(r.status, r.stderr).toBe(0);
      // Nothing before the start loads it, so it is the warm-up that does.
      expect(JSON.parse(r.stdout)).toEqual({ before: false, after: true });
    },
  );

  it("leaves no request line of the warm-up in the debug log, and logs a client's call", async () => {
    const lines: string[] = [];
    const server = await startHttpServer({ port: 0, log: "debug", logSink: (line) => lines.push(line) });
    try {
      const requests = () =>
        lines.map((l) => JSON.parse(l) as { msg: string; path?: string }).filter((l) => l.msg === "request");
      expect(requests()).toEqual([]);
      const reply = await fetch(`${server.url}/example.exampleService/Hello`, {
        method: "POST",
        headers: { "content-type": "application/grpc-web+proto" },
        body: new Uint8Array([0, 0, 0, 0, 4, 0x0a, 2, 0x68, 0x69]),
      });
      expect(reply.status).toBe(200);
      await reply.arrayBuffer();
      await expect.poll(() => requests().length).toBe(1);
      expect(requests()[0]?.path).toBe("/example.exampleService/Hello");
    } finally {
      await server.close();
    }
  });
});
