// A gRPC server on node:http2 that answers every Hello "hello", each after a delay the test chooses (a slow target),
// and the answer itself for servers of a test's own.
import http2 from "node:http2";
import { encodeMessage } from "../../common/message.js";
import { listenTracked } from "../../fixtures/_internals/listen-tracked.js";

/** Listens on 127.0.0.1 port 0; `delayMs(n)` is the wait before answering the n-th call (from 0). */
export function listenSlowHello(delayMs: (n: number) => number): ReturnType<typeof listenTracked> {
  let n = 0;
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    stream.resume();
    stream.on("end", () => {
      const timer = setTimeout(() => answerHello(stream), delayMs(n++));
      stream.on("close", () => clearTimeout(timer));
    });
  });
  return listenTracked(server);
}

/** Answers a call on `stream` "hello" with grpc-status 0, unless it has ended already. */
export function answerHello(stream: http2.ServerHttp2Stream): void {
  if (stream.destroyed || stream.closed) return;
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  const body = encodeMessage("hello");
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(body.length, 1);
  stream.end(Buffer.concat([prefix, Buffer.from(body)]));
}
