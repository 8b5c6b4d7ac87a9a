// Beside the harness replay of a gRPC failure, the grpcurl command that sends the failing request: shell-quoted,
// the user's metadata values as placeholders, and none where grpcurl cannot send what the check sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../contract/message.js";
import { cli } from "../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../helpers/grpc-js-server.js";

/** Splits a shell line into words: bare words, and whole words in single quotes ('\'' for a quote inside). */
const shellWords = (line: string) =>
  (line.match(/'(?:[^']|'\\'')*'|\S+/g) ?? []).map((w) =>
    w.startsWith("'") ? w.slice(1, -1).replace(/'\\''/g, "'") : w,
  );

let emptyBroken: TestServer;
let servesGarbage: TestServer;
beforeAll(async () => {
  // An empty request gets a reply that is not a Message.
  emptyBroken = await startGrpcJsServer((req) => {
    const d = decodeMessage(req);
    if (!d.ok) return { code: 13, details: d.reason };
    return d.message.body === "" ? Buffer.from([0xff, 0xff]) : Buffer.from(encodeMessage(`hi ${d.message.body}`));
  });
  // Serves bytes that are no Message as if they were.
  servesGarbage = await startGrpcJsServer(() => Buffer.from(encodeMessage("ok")));
});
afterAll(async () => {
  await Promise.all([emptyBroken?.close(), servesGarbage?.close()]);
});

describe("a gRPC failure's grpcurl line", () => {
  it("sends the request the check sent, to the address given, with metadata values as placeholders", async () => {
    const run = await cli([
      "check",
      "--grpc",
      emptyBroken.address,
      "--only",
      "grpc.defaults.empty-request",
      "--metadata",
      "authorization=Bearer s3cr3t-value",
      "--seed",
      "1",
    ]);
    expect(run.code).toBe(1);
    const line = /^ {5}grpcurl: (.*)$/m.exec(run.stdout)?.[1];
    expect(line, run.stdout).toBeDefined();
    const words = shellWords(line as string);
    expect(words.slice(0, 2)).toEqual(["grpcurl", "-plaintext"]);
    expect(words.slice(-2)).toEqual([emptyBroken.address, "example.exampleService/Hello"]);
    expect(words[words.indexOf("-proto") + 1]).toBe("example/example.proto");
    expect(words[words.indexOf("-H") + 1]).toBe("authorization: <METADATA_VALUE>");
    // The body grpcurl sends is the empty Message the check sent.
    const data = JSON.parse(words[words.indexOf("-d") + 1] as string) as { body?: string };
    expect(Buffer.from(encodeMessage(data.body ?? ""))).toEqual(Buffer.alloc(0));
    expect(run.stdout).not.toContain("s3cr3t");
    // It comes right after the harness replay.
    expect(run.stdout).toMatch(/^ {5}replay: .*\n {5}grpcurl: /m);
  });

  it(
    "is left out when the failing requests are none grpcurl can send (hand-built frames of bytes that are no " +
      "Message)",
    async () => {
      const run = await cli([
        "check",
        "--grpc",
        servesGarbage.address,
        "--only",
        "grpc.errors.malformed-request",
        "--seed",
        "1",
      ]);
      expect(run.stdout).toMatch(/^not gating: FAIL grpc\.errors\.malformed-request /m);
      expect(run.stdout).toMatch(/^ {5}replay: /m);
      expect(run.stdout).not.toMatch(/grpcurl/);
    },
  );
});
