// A reply that is not gRPC (a proxy's HTML error page: HTTP 502, text/html) is named for what it is, by gRPC's own
// HTTP-to-status mapping, and its bytes are never read as length-prefixed messages ("<htm" is 1.7 GB as a length).
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../../contract/message.js";
import { sendRaw } from "../../../../harness/protocols/grpc/raw-h2.js";
import { parseAddress } from "../../../../harness/targets/address.js";
import { grpcStatusOfHttp, Status } from "../../../../harness/protocols/rpc.js";
import { describeRaw } from "../../../../suites/grpc/_internals/raw.js";
import { cli } from "../../../helpers/cli.js";

const PAGE =
  "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad " +
  "Gateway</h1></center><hr><center>nginx</center></body></html>\n";
let server: http2.Http2Server;
let address = "";

beforeAll(async () => {
  server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    stream.resume();
    stream.respond({ ":status": 502, "content-type": "text/html" });
    stream.end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("a gRPC call answered with a proxy's HTML error page", () => {
  it("is HTTP 502 text/html with no messages, and said to be no gRPC reply, read as UNAVAILABLE", async () => {
    const res = await sendRaw(
      { address: parseAddress(address), display: address, metadata: {}, timeoutMs: 4000 },
      undefined,
      { body: [{ compressed: false, data: encodeMessage("x") }] },
    );
    expect(res.failure).toBeUndefined();
    expect(res.httpStatus).toBe(502);
    expect(res.frames).toEqual([]);
    expect(res.leftover).toBe(Buffer.byteLength(PAGE));
    expect(describeRaw(res)).toBe(
      "HTTP 502 with content-type text/html: not a gRPC reply (a proxy's error page?), which gRPC clients read " +
        "as 14 UNAVAILABLE",
    );
  });

  it("maps HTTP statuses as gRPC's http-grpc-status-mapping.md does", () => {
    expect([400, 401, 403, 404, 429, 502, 503, 504, 500, 413].map(grpcStatusOfHttp)).toEqual([
      Status.INTERNAL,
      Status.UNAUTHENTICATED,
      Status.PERMISSION_DENIED,
      Status.UNIMPLEMENTED,
      Status.UNAVAILABLE,
      Status.UNAVAILABLE,
      Status.UNAVAILABLE,
      Status.UNAVAILABLE,
      Status.UNKNOWN,
      Status.UNKNOWN,
    ]);
  });

  it("never reaches a verdict as a message length: check names the page", async () => {
    const run = await cli(["check", "--grpc", address, "--profile", "protocol", "--timeout", "2s"]);
    expect(run.stdout + run.stderr).not.toMatch(/announced as \d+ bytes/);
  });
});
