// A TCP proxy on loopback that delays every chunk by a fixed time each way, as a network with that latency would:
// for proving that verdicts do not depend on latency, and for measuring a check run across a slow link.
import net from "node:net";

export interface LatencyProxy {
  /** 127.0.0.1:PORT of the proxy. */
  address: string;
  port: number;
  close(): Promise<void>;
}

/** Forwards to 127.0.0.1:targetPort, holding each chunk `delayMs` in each direction, in order. */
export function startLatencyProxy(targetPort: number, delayMs: number): Promise<LatencyProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, "127.0.0.1");
    // A link delays chunks, it does not hold them back: Nagle's algorithm on the proxy's own sockets would keep a
    // reply's second chunk (a gRPC reply's trailers) until the first was acknowledged, which no link adds.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    relay(client, upstream, delayMs);
    relay(upstream, client, delayMs);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({
        address: `127.0.0.1:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Each chunk leaves delayMs after it arrived, never before the one ahead of it; the end likewise. */
function relay(from: net.Socket, to: net.Socket, delayMs: number): void {
  let last = 0;
  const later = (work: () => void) => {
    const at = Math.max(performance.now() + delayMs, last);
    last = at;
    setTimeout(work, at - performance.now());
  };
  from.on("data", (chunk: Buffer) => later(() => !to.destroyed && to.write(chunk)));
  from.on("end", () => later(() => to.end()));
  from.on("close", () => later(() => to.destroy()));
}
