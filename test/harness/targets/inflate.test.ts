// Decompression of target data: legal encodings decoded, the output bounded whatever the ratio, and a response
// sent with a content coding the run never asked for read as what it decodes to (RFC 9110 §12.5.3: without
// Accept-Encoding any coding is acceptable), so a legal server is not failed for compressing.
import * as http from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { gzipBomb } from "../../../fixtures/hostile-targets/bombs.js";
import { createHttpTarget } from "../../../harness/targets/create-http-target.js";
import { inflate } from "../../../harness/targets/inflate.js";

let server: StartedHttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("inflate", () => {
  const text = Buffer.from('{"body": "hello"}');

  it.each([
    ["gzip", gzipSync(text)],
    ["x-gzip", gzipSync(text)],
    ["deflate", deflateSync(text)],
    ["br", brotliCompressSync(text)],
    ["identity", text],
  ] as const)("decodes %s", async (encoding, data) => {
    const out = await inflate(new Uint8Array(data), encoding, 1024);
    expect(out.ok && Buffer.from(out.bytes).toString()).toBe(text.toString());
  });

  it("stops a bomb at its bound: 1 GiB in about 1 MiB on the wire, refused after the first 1 MiB of output", async () => {
    const out = await inflate(new Uint8Array(gzipBomb()), "gzip", 1024 * 1024);
    expect(out).toMatchObject({
      ok: false,
      reason: "too-large",
      message: expect.stringMatching(/^it inflates past 1048576 bytes/),
    });
  });

  it("says so for bytes that are not what they claim, and for an encoding it does not know", async () => {
    expect(await inflate(new Uint8Array([1, 2, 3, 4]), "gzip", 1024)).toMatchObject({ ok: false, reason: "corrupt" });
    expect(await inflate(new Uint8Array([1, 2, 3]), "zstd", 1024)).toMatchObject({
      ok: false,
      reason: "unknown-encoding",
    });
  });
});

describe("an HTTP response with a content coding", () => {
  it("is read as what it decodes to, codings undone last first", async () => {
    const body = JSON.stringify([{ id: "1", body: "hello" }]);
    server = await listen(
      http.createServer((req, res) => {
        const gz = req.url === "/two" ? brotliCompressSync(gzipSync(body)) : gzipSync(body);
        res
          .writeHead(200, {
            "content-type": "application/json",
            "content-encoding": req.url === "/two" ? "gzip, br" : "gzip",
          })
          .end(gz);
      }),
    );
    const target = createHttpTarget({ baseUrl: server.url });
    const one = await target.request({ method: "GET", path: "/messages" });
    expect(one.text).toBe(body);
    const two = await target.request({ method: "GET", path: "/two" });
    expect(two.text).toBe(body);
    await target.close();
  });
});
