// The reference gRPC server under generated and mutated requests over raw HTTP/2: every call gets a status, and
// the server keeps serving. FUZZ_RUNS sets the number of cases (npm run soak runs many more).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../contract/message.js";
import { createGrpcTarget } from "../../harness/targets/create-grpc-target.js";
import type { GrpcTarget } from "../../harness/targets/grpc-target.js";
import type { RawRequest, RawResponse } from "../../harness/protocols/rpc.js";
import { startGrpcServer, type GrpcServerHandle } from "../../reference-server/grpc.js";
import { heapAfterGc, mib } from "../helpers/heap.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
let server: GrpcServerHandle;
let target: GrpcTarget;
const tally = { cases: 0, statuses: new Map<string, number>(), heapBefore: 0, heapAfter: 0 };

beforeAll(async () => {
  server = await startGrpcServer({ port: 0, log: "silent" });
  target = createGrpcTarget({ address: server.address, timeoutMs: 3000, maxCalls: RUNS + 10 });
});
afterAll(async () => {
  await target?.close();
  await server?.close();
  const seen = [...tally.statuses]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}×${n}`)
    .join(", ");
  console.log(
    `gRPC fuzz: ${tally.cases} cases, every one answered: ${seen}; heap ${mib(tally.heapBefore)} before, ` +
      `${mib(tally.heapAfter)} after`,
  );
});

/** A valid Message, then perhaps bytes flipped, cut or appended: close to what the server decodes, and past it. */
const messageBytes = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => encodeMessage(s)),
  fc.uint8Array({ maxLength: 64 }),
  fc.tuple(fc.string({ maxLength: 20 }), fc.nat(30), fc.integer({ min: 0, max: 255 })).map(([s, at, byte]) => {
    const bytes = Uint8Array.from(encodeMessage(s));
    if (bytes.length > 0) bytes[at % bytes.length] = byte;
    return bytes;
  }),
  fc
    .tuple(fc.string({ maxLength: 20 }), fc.nat(20))
    .map(([s, cut]) => encodeMessage(s).subarray(0, Math.max(0, encodeMessage(s).length - cut))),
);

/** One length-prefixed frame whose prefix may lie about its length or claim compression. */
const frame = fc.record({
  compressed: fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 2, max: 255 })),
  data: messageBytes,
  lengthDelta: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: -10, max: 10 }), fc.constant(0x7fffffff)),
});

const body = fc.oneof(
  fc.array(frame, { minLength: 0, maxLength: 3 }).map((frames) => {
    const parts = frames.map((f) => {
      const prefix = Buffer.alloc(5);
      prefix[0] = f.compressed;
      prefix.writeUInt32BE(Math.max(0, Math.min(0xffffffff, f.data.length + f.lengthDelta)), 1);
      return Buffer.concat([prefix, Buffer.from(f.data)]);
    });
    return new Uint8Array(Buffer.concat(parts));
  }),
  fc.uint8Array({ maxLength: 128 }),
);

const headerValue = fc.oneof(fc.constant(undefined), fc.constant(null), fc.stringMatching(/^[\x20-\x7e]{0,24}$/));
const request = fc.record({
  path: fc.oneof(
    { weight: 6, arbitrary: fc.constant("/example.exampleService/Hello") },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "/",
        "/example.exampleService/",
        "/example.exampleService/hello",
        "/grpc.health.v1.Health/Check",
        "//x",
      ),
    },
    { weight: 1, arbitrary: fc.stringMatching(/^\/[\x21-\x7e]{0,40}$/) },
  ),
  // Mostly what a gRPC client sends, so that most cases reach the decoder rather than stop at the door.
  method: fc.oneof(
    { weight: 8, arbitrary: fc.constant("POST") },
    { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE", "OPTIONS") },
  ),
  contentType: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom("application/grpc", "application/grpc+proto") },
    { weight: 1, arbitrary: fc.constantFrom("application/json", "text/plain", "", "application/grpc-web") },
    { weight: 1, arbitrary: headerValue },
  ),
  encoding: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom("gzip", "identity", "deflate", "br", "x-unknown"),
    headerValue,
  ),
  timeout: fc.oneof(
    fc.constant(undefined),
    fc.constantFrom("1S", "100m", "0n", "99999999H", "1x", "-1S", "abc"),
    headerValue,
  ),
  // Node refuses to send te with any value but "trailers", so only its absence is tried.
  te: fc.constantFrom("trailers", "trailers", null),
  body,
});

function statusOf(res: RawResponse): string | undefined {
  const grpcStatus = res.trailers["grpc-status"]?.[0];
  if (grpcStatus !== undefined) return `grpc-status ${grpcStatus}`;
  // An HTTP-level refusal (405 for GET, 415 for a non-gRPC content-type) is an answer too.
  if (res.httpStatus !== undefined && res.httpStatus !== 200 && res.failure === undefined)
    return `HTTP ${res.httpStatus}`;
  return undefined;
}

describe("the reference gRPC server under fuzzing", () => {
  it(
    `answers each of ${RUNS} generated and mutated requests with a status, and still serves Hello`,
    async () => {
      tally.heapBefore = heapAfterGc();
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const headers: Record<string, string | null> = {};
          if (r.contentType !== undefined) headers["content-type"] = r.contentType;
          if (r.encoding !== undefined) headers["grpc-encoding"] = r.encoding;
          if (r.timeout !== undefined) headers["grpc-timeout"] = r.timeout;
          if (r.te !== undefined) headers["te"] = r.te;
          const raw: RawRequest = { path: r.path, method: r.method, headers, body: r.body, timeoutMs: 3000 };
          const res = await target.raw(raw);
          const status = statusOf(res);
          tally.cases++;
          if (status === undefined) {
            throw new Error(
              `no status: HTTP ${res.httpStatus ?? "none"}, failure ${JSON.stringify(res.failure)}, trailers ` +
                `${JSON.stringify(res.trailers)}`,
            );
          }
          tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
        }),
        { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 20261123), endOnFailure: true },
      );
      const after = await target.unary(encodeMessage("still here"));
      expect(after.code).toBe(0);
      tally.heapAfter = heapAfterGc();
    },
    Math.max(60_000, RUNS * 20),
  );
});
