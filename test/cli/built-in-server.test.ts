// The built-in reference server of `check` with no target runs on a worker thread (harness/cli/built-in-server.ts):
// its listening sockets are not on the checks' thread, it answers gRPC and HTTP, and close ends it; from the
// TypeScript source, where no compiled worker is there, it starts in this thread, as it did before.
import { existsSync } from "node:fs";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startBuiltInServer as fromSource } from "../../harness/cli/built-in-server.js";

const COMPILED = new URL("../../dist/harness/cli/built-in-server.js", import.meta.url);
const listening = () => process.getActiveResourcesInfo().filter((r) => r === "TCPServerWrap").length;

/** Whether a TCP connection to host:port is accepted. */
const accepts = (address: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
    const socket = net.connect(port, host, () => (socket.destroy(), resolve(true)));
    socket.on("error", () => resolve(false));
  });

describe("the built-in reference server", () => {
  it("runs on a worker thread when compiled: its ports listen elsewhere, it answers, and close ends it", async () => {
    expect(existsSync(fileURLToPath(COMPILED)), "npm run build first").toBe(true);
    const { startBuiltInServer } = (await import(COMPILED.href)) as typeof import("../../harness/cli/built-in-server.js");
    const before = listening();
    const server = await startBuiltInServer("k".repeat(24));
    try {
      expect(listening()).toBe(before);
      expect(await accepts(server.grpcAddress)).toBe(true);
      const res = await fetch(`${server.httpUrl}/no-such-collection`, { headers: { "x-api-key": "k".repeat(24) } });
      expect(res.status).toBe(404);
      await res.arrayBuffer();
    } finally {
      await server.close();
    }
    expect(await accepts(server.grpcAddress)).toBe(false);
    expect(await accepts(new URL(server.httpUrl).host)).toBe(false);
  });

  it("starts in this thread from the TypeScript source", async () => {
    const server = await fromSource("k".repeat(24));
    try {
      expect(listening()).toBeGreaterThanOrEqual(2);
      expect(await accepts(server.grpcAddress)).toBe(true);
    } finally {
      await server.close();
    }
  });
});
