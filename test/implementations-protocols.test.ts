// Every correct implementation answers Hello over every protocol it claims, with connect-node's own clients on real
// sockets, and its legal reply; what it declares it does not serve is refused, not answered wrongly.
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { exampleService } from "../gen/example/example_pb.js";
import { encodeMessage } from "../contract/message.js";
import {
  protocolImplementations,
  type ProtocolImplementation,
  type RunningProtocolImplementation,
} from "../fixtures/implementations/protocols.js";
import { MALFORMED } from "../suites/grpc/errors-malformed-request.js";
import { connectGet, connectUnary, grpcWebUnary } from "./helpers/rpc-raw.js";
import { within } from "./helpers/within.js";
import { skipIfMissing } from "./helpers/toolchain.js";
import { checkVerdicts } from "./helpers/cli.js";
import { PROTOCOL_NAMES as PROTOCOLS } from "../harness/protocols/index.js";
import { catalogue } from "../suites/index.js";

const START_MS = 240_000; // a cold Go build compiles grpc-go from source
const BODIES = ["", "world", "two words here", "Grüße 🌍"];

function transports(impl: ProtocolImplementation, running: RunningProtocolImplementation): Array<[string, Transport]> {
  const out: Array<[string, Transport]> = [];
  const { httpUrl, grpc } = running;
  if (impl.protocols.includes("grpc") && grpc !== undefined)
    out.push(["gRPC", createGrpcTransport({ baseUrl: `http://${grpc}` })]);
  if (httpUrl === undefined) return out;
  const versions = impl.serves.http2 ? (["1.1", "2"] as const) : (["1.1"] as const);
  for (const httpVersion of versions) {
    if (impl.protocols.includes("connect")) {
      out.push([`Connect, binary, HTTP/${httpVersion}`, createConnectTransport({ baseUrl: httpUrl, httpVersion })]);
      if (impl.serves.connectJson)
        out.push([
          `Connect, JSON, HTTP/${httpVersion}`,
          createConnectTransport({ baseUrl: httpUrl, httpVersion, useBinaryFormat: false }),
        ]);
    }
    if (impl.protocols.includes("grpc-web")) {
      out.push([`gRPC-Web, binary, HTTP/${httpVersion}`, createGrpcWebTransport({ baseUrl: httpUrl, httpVersion })]);
      if (impl.serves.grpcWebJson)
        out.push([
          `gRPC-Web, JSON, HTTP/${httpVersion}`,
          createGrpcWebTransport({ baseUrl: httpUrl, httpVersion, useBinaryFormat: false }),
        ]);
    }
  }
  return out;
}

describe.each(protocolImplementations)("the $name implementation ($stack), replying $reply", (impl) => {
  it(
    `answers Hello over ${impl.protocols.join(", ")} with its reply`,
    async (t) => {
      await skipIfMissing(impl, (why) => t.skip(why));
      const running = await within(`starting ${impl.name}`, START_MS, impl.start());
      try {
        const all = transports(impl, running);
        // Each protocol it claims is reached by at least one client.
        expect(all.length).toBeGreaterThanOrEqual(impl.protocols.length);
        for (const [name, transport] of all) {
          const client = createClient(exampleService, transport);
          for (const body of BODIES) {
            const reply = await client.hello({ body }, { timeoutMs: 5000 });
            expect(reply.body, `${name}, body ${JSON.stringify(body)}`).toBe(impl.replyOf(body));
          }
        }
        if (running.httpUrl !== undefined) {
          // The wire as the protocols define it, read without connect-es: content types and status placement.
          const connect = await connectUnary(running.httpUrl, encodeMessage("raw"));
          expect([connect.code, connect.contentType]).toEqual([0, "application/proto"]);
          const web = await grpcWebUnary(running.httpUrl, encodeMessage("raw"));
          expect([web.code, web.contentType]).toEqual([0, "application/grpc-web+proto"]);
          expect(web.trailerFrame, "the status in a trailer frame at the end of the body").toBe(true);
          const refused = await connectUnary(running.httpUrl, new Uint8Array(MALFORMED[0]!.bytes));
          expect(
            refused.code,
            "a malformed message refused with a Connect error JSON carrying its code",
          ).toBeGreaterThan(0);
          const get = await connectGet(running.httpUrl, encodeMessage("by get"));
          if (impl.serves.connectGet) {
            expect(get.code).toBe(0);
            expect(Buffer.from(get.message ?? []).equals(Buffer.from(encodeMessage(impl.replyOf("by get"))))).toBe(
              true,
            );
          } else {
            // Refused with a Connect error (405 from connect-es), never answered as if it were a POST.
            expect(get.httpStatus).not.toBe(200);
          }
        }
      } finally {
        await running.close();
      }
    },
    START_MS + 60_000,
  );
});

// The catalogue over each protocol an implementation serves beside gRPC: no check fails a correct server, under
// --strict, and every RPC check that applies to the protocol judged it (none skipped for want of a reply).
const contractIds = catalogue.filter((c) => c.area === "contract").map((c) => c.id);
describe.each(
  protocolImplementations.flatMap((impl) =>
    impl.protocols.filter((p) => p !== "grpc").map((protocol) => ({ impl, protocol, name: impl.name })),
  ),
)("check --$protocol against $name", ({ impl, protocol }) => {
  it(
    "fails no check, and judges every check that applies to the protocol",
    async (t) => {
      await skipIfMissing(impl, (why) => t.skip(why));
      const running = await within(`starting ${impl.name}`, START_MS, impl.start());
      try {
        const run = await checkVerdicts([
          `--${protocol}`,
          running.httpUrl as string,
          "--skip",
          contractIds.join(","),
          "--seed",
          "7",
          "--runs",
          "25",
          "--strict",
        ]);
        expect(run.failed).toEqual([]);
        const rpcIds = new Set(catalogue.filter((c) => c.area === "grpc").map((c) => c.id));
        const rpc = run.report.checks.filter((c) => rpcIds.has(c.id));
        const applies = (id: string) => (catalogue.find((c) => c.id === id)?.protocols ?? PROTOCOLS).includes(protocol);
        // What skips is either another protocol's, a replica check with no replica, or a choice the server made (GET).
        const skipped = rpc.filter((c) => c.status === "skip" && applies(c.id)).map((c) => c.id);
        const open = (id: string) =>
          id === "grpc.stateless.replicas" || // no --replica given
          catalogue.find((c) => c.id === id)?.rpcTargets === "all" || // compares transports: one was given here
          id === "grpc.defaults.omitted" || // shown only by a reply that is empty, which the reply's meaning decides
          (id === "connect.get" && !impl.serves.connectGet); // GET is the server's to serve or not
        expect(skipped.filter((id) => !open(id))).toEqual([]);
        expect(rpc.filter((c) => c.status === "pass").length).toBeGreaterThanOrEqual(15);
        // A legal choice judged, not passed for want of evidence: its gRPC-Web errors carry their codes' statuses.
        if (impl.name === "go-grpc-web-mapped")
          expect(run.report.checks.find((c) => c.id === "connect.error.http-status")?.message).toMatch(
            /^every error's HTTP status fits its code: .*→ 50\d/,
          );
      } finally {
        await running.close();
      }
    },
    START_MS + 120_000,
  );
});
