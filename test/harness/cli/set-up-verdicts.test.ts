// Set-up verdicts for every target flag, through the real CLI process: before any check, each target is asked in the
// way its flag means, and one that speaks something else is exit 3 in one line naming the flag, the address, what was
// expected and what answered; the right kind, and a legal one that answers with its protocol's errors, still runs.
// A target that answered the probes and then nothing at all (it died) is exit 3 too, never "not conformant".
import * as http from "node:http";
import http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeMessage } from "../../../contract/message.js";
import { listen } from "../../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../../fixtures/broken-servers/http/types.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { cli } from "../../helpers/cli.js";
import { runCliProcess } from "../../helpers/cli-process.js";
import { selfSignedCert } from "../../helpers/tls.js";

const oneLine = (stderr: string) => {
  expect(stderr.split("\n").filter((l) => l !== "")).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at |node:internal|Error:/m);
};
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

let reference: ReferenceServer;
/** A plain HTTP/1.1 JSON server: every request 200 application/json. */
let json: StartedHttpServer;
/** An HTTP/2-only (h2c) JSON server: every stream 200 application/json, no gRPC. */
let h2json: { address: string; close(): Promise<void> };
/** A Connect server that implements nothing: every call a Connect error, unimplemented. Legal Connect. */
let connectUnimplemented: StartedHttpServer;

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" });
  json = await listen(
    http.createServer(
      (req, res) => (req.resume(), res.writeHead(200, { "content-type": "application/json" }).end('{"messages":[]}')),
    ),
  );
  connectUnimplemented = await listen(
    http.createServer((req, res) => {
      req.resume();
      res
        .writeHead(404, { "content-type": "application/json" })
        .end('{"code":"unimplemented","message":"example.exampleService is not served here"}');
    }),
  );
  const server = http2.createServer();
  server.on("stream", (stream) => {
    stream.on("error", () => undefined);
    stream.resume();
    stream.respond({ ":status": 200, "content-type": "application/json" });
    stream.end('{"messages":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  h2json = {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}, 60_000);

afterAll(async () => {
  await reference?.close();
  await json?.close();
  await connectUnimplemented?.close();
  await h2json?.close();
});

interface WrongKind {
  name: string;
  args: () => string[];
  /** The flag and address the line must name, then what it must say was expected and what answered. */
  says: () => RegExp;
}

const grpcPort = () => `http://${reference.grpcAddress}`;

const WRONG_KIND: readonly WrongKind[] = [
  {
    name: "--http at a gRPC port (HTTP/2 only)",
    args: () => ["--http", grpcPort()],
    says: () =>
      new RegExp(
        `^example-conformance: --http ${escapeRegExp(grpcPort())} does not speak HTTP/1\\.1, which the HTTP checks ` +
          `speak: expected an HTTP/1\\.x reply to GET /; got HTTP/2 frames \\(a (SETTINGS|GOAWAY) frame first\\): ` +
          `an HTTP/2-only port, as a gRPC server's is\\n$`,
      ),
  },
  {
    name: "--http-replica at a gRPC port",
    args: () => ["--http", reference.httpUrl, "--http-replica", grpcPort()],
    says: () =>
      new RegExp(
        `^example-conformance: --http-replica ${escapeRegExp(grpcPort())} does not speak HTTP/1\\.1, .*; got HTTP/2 frames`,
      ),
  },
  {
    name: "--grpc at an HTTP/1.1 JSON server",
    args: () => ["--grpc", json.url.replace("http://", "")],
    says: () =>
      new RegExp(
        `^example-conformance: --grpc ${escapeRegExp(json.url.replace("http://", ""))} does not speak HTTP/2: .*it ` +
          `answered in HTTP/1\\.x`,
      ),
  },
  {
    name: "--grpc at an HTTP/2 JSON server (no gRPC)",
    args: () => ["--grpc", h2json.address],
    says: () =>
      new RegExp(
        `^example-conformance: --grpc ${escapeRegExp(h2json.address)} does not speak gRPC: expected a gRPC reply to a ` +
          `call of Hello: content-type application/grpc or a grpc-status; got HTTP 200 application/json \\(15 ` +
          `bytes\\) and no grpc-status\\n$`,
      ),
  },
  {
    name: "--replica at an HTTP/2 JSON server beside a gRPC --grpc",
    args: () => ["--grpc", reference.grpcAddress, "--replica", h2json.address],
    says: () =>
      new RegExp(
        `^example-conformance: --replica ${escapeRegExp(h2json.address)} does not speak gRPC: .*got HTTP 200 ` +
          `application/json`,
      ),
  },
  {
    name: "--connect at a gRPC port (h2c only)",
    args: () => ["--connect", grpcPort()],
    says: () =>
      new RegExp(
        `^example-conformance: --connect ${escapeRegExp(grpcPort())} does not speak Connect: expected a Connect reply ` +
          `to a unary POST of Hello \\(application/proto, or application/json after a 415\\).*; got HTTP/2 frames ` +
          `\\(a (SETTINGS|GOAWAY) frame first\\): an HTTP/2-only port, as a gRPC server's is\\n$`,
      ),
  },
  {
    name: "--connect at a plain HTTP JSON server",
    args: () => ["--connect", json.url],
    says: () =>
      new RegExp(
        `^example-conformance: --connect ${escapeRegExp(json.url)} does not speak Connect: expected .*; got HTTP 200 ` +
          `application/json "\\{\\\\"messages\\\\":\\[\\]\\}"\\n$`,
      ),
  },
  {
    name: "--grpc-web at a plain HTTP JSON server",
    args: () => ["--grpc-web", json.url],
    says: () =>
      new RegExp(
        `^example-conformance: --grpc-web ${escapeRegExp(json.url)} does not speak gRPC-Web: expected a gRPC-Web reply ` +
          `.*; got HTTP 200 application/json "\\{\\\\"messages\\\\":\\[\\]\\}", with no grpc-status\\n$`,
      ),
  },
  {
    name: "--grpc-web at a gRPC port (h2c only)",
    args: () => ["--grpc-web", grpcPort()],
    says: () =>
      new RegExp(
        `^example-conformance: --grpc-web ${escapeRegExp(grpcPort())} does not speak gRPC-Web: .*; got HTTP/2 frames`,
      ),
  },
  {
    name: "--connect beside a right --grpc, at a plain HTTP JSON server",
    args: () => ["--grpc", reference.grpcAddress, "--connect", json.url],
    says: () => new RegExp(`^example-conformance: --connect ${escapeRegExp(json.url)} does not speak Connect: `),
  },
];

describe("exit 3, one line: a target flag at a server of another kind", () => {
  it.each(WRONG_KIND)("$name", async ({ args, says }) => {
    const run = await runCliProcess(["check", ...args(), "--timeout", "3s"]);
    expect(run.stderr).toMatch(says());
    expect(run.code).toBe(3);
    oneLine(run.stderr);
    // Refused before any check: no verdict.
    expect(run.stdout).not.toMatch(/FAIL|conformant|partial/);
  });
});

describe("the right kind, and a legal one answering with its protocol's errors, still runs", () => {
  const RIGHT_KIND: readonly { name: string; args: () => string[]; code: number }[] = [
    {
      name: "--grpc at a gRPC port",
      args: () => ["--grpc", reference.grpcAddress, "--only", "grpc.defaults.empty-request"],
      code: 0,
    },
    {
      name: "--grpc with --replica, both gRPC",
      args: () => [
        "--grpc",
        reference.grpcAddress,
        "--replica",
        reference.grpcAddress,
        "--only",
        "grpc.defaults.empty-request",
      ],
      code: 0,
    },
    {
      name: "--connect over HTTP/1.1",
      args: () => ["--connect", reference.httpUrl, "--only", "grpc.defaults.empty-request"],
      code: 0,
    },
    {
      name: "--grpc-web over HTTP/1.1",
      args: () => ["--grpc-web", reference.httpUrl, "--only", "grpc.defaults.empty-request"],
      code: 0,
    },
    {
      name: "--http with --http-replica over HTTP/1.1",
      args: () => [
        "--http",
        reference.httpUrl,
        "--http-replica",
        reference.httpUrl,
        "--only",
        "http.create.status-201",
      ],
      code: 0,
    },
    // Connect spoken, Hello not served: judged (and failed), not refused as another protocol.
    {
      name: "--connect at a Connect server that answers every call unimplemented",
      args: () => ["--connect", connectUnimplemented.url, "--only", "grpc.defaults.empty-request"],
      code: 1,
    },
  ];
  // In process: these runs are not about how the process ends, and a process each would only add its start-up.
  it.each(RIGHT_KIND)("$name: exit $code", async ({ args, code }) => {
    const run = await cli(["check", ...args(), "--timeout", "3s"]);
    expect(run.stderr).not.toMatch(/does not speak/);
    expect(run.code).toBe(code);
    expect(run.stdout).toMatch(code === 0 ? /partial/ : /not conformant/);
  });
});

describe("exit 3, one line: a flag over TLS at an HTTP/2-only TLS port", () => {
  const material = selfSignedCert();
  let tlsReference: ReferenceServer;
  beforeAll(async () => {
    tlsReference = await startReferenceServer({
      grpcPort: 0,
      httpPort: 0,
      log: "silent",
      tls: { certFile: material.certFile, keyFile: material.keyFile },
    });
  }, 60_000);
  afterAll(() => tlsReference?.close());

  it(
    "--connect https:// at a gRPC TLS port: Node's own 403 to a client without ALPN h2 is named, not taken for a " +
      "guard's",
    async () => {
      const url = `https://${tlsReference.grpcAddress}`;
      const run = await runCliProcess(["check", "--connect", url, "--ca", material.certFile, "--timeout", "3s"]);
      // Before: exit 5, "the target wants credentials (pass --metadata): every call got PERMISSION_DENIED".
      expect(run.stderr).toMatch(
        new RegExp(
          `^example-conformance: --connect ${escapeRegExp(url)} does not speak Connect: expected .*; got HTTP 403 ` +
            `text/plain "Missing ALPN Protocol.*": an HTTP/2-only TLS port, as a gRPC server's is\\n$`,
        ),
      );
      expect(run.code).toBe(3);
      oneLine(run.stderr);
    },
  );

  it("--http https:// at a gRPC TLS port: the refused ALPN http/1.1 is named with the flag, not as an OpenSSL error", async () => {
    const url = `https://${tlsReference.grpcAddress}`;
    const run = await runCliProcess(["check", "--http", url, "--ca", material.certFile, "--timeout", "3s"]);
    expect(run.stderr).toMatch(
      new RegExp(
        `^example-conformance: --http ${escapeRegExp(url)} does not speak HTTP/1\\.1, which the HTTP checks speak: TLS ` +
          `refused ALPN http/1\\.1 \\(no application protocol\\): an HTTP/2-only TLS port, as a gRPC server's ` +
          `is\\n$`,
      ),
    );
    expect(run.code).toBe(3);
    oneLine(run.stderr);
  });
});

/**
 * A server that answers `probes` requests (the set-up probes'), then stops listening and drops every connection: it
 * died right after the probes, and every check's request fails at the connection level.
 */
async function diesAfter(
  probes: number,
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<StartedHttpServer> {
  const sockets = new Set<Socket>();
  let served = 0;
  const server = http.createServer((req, res) => {
    res.on("finish", () => {
      if (++served !== probes) return;
      server.close();
      for (const s of sockets) s.destroy();
    });
    answer(req, res);
  });
  server.on("connection", (s: Socket) => (sockets.add(s), s.on("close", () => sockets.delete(s))));
  const started = await listen(server);
  return { ...started, close: () => (server.listening ? started.close() : Promise.resolve()) };
}

describe("exit 3, one line: a target that answered the probes and then nothing at all", () => {
  it("--http: dead after the reach, protocol and credentials probes (5 requests), every check's request refused", async () => {
    const server = await diesAfter(5, (req, res) => {
      req.resume();
      res
        .writeHead(req.method === "GET" ? 200 : 404, { "content-type": "application/json" })
        .end(req.method === "GET" ? "[]" : '{"error":"no"}');
    });
    try {
      const run = await runCliProcess([
        "check",
        "--http",
        server.url,
        "--only",
        "http.create.*,http.read.*",
        "--timeout",
        "3s",
      ]);
      expect(run.stderr).toMatch(
        new RegExp(
          `^example-conformance: no verdict: --http ${escapeRegExp(server.url)} answered none of the checks' calls ` +
            `after the set-up probes \\(\\d+ failed at the connection level; the first: .*ECONNREFUSED.*\\)\\n$`,
        ),
      );
      expect(run.code).toBe(3);
      oneLine(run.stderr);
    } finally {
      await server.close();
    }
  });

  it("--connect: dead after the protocol and credentials probes (2 calls), every check's call refused", async () => {
    const server = await diesAfter(2, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => res.writeHead(200, { "content-type": "application/proto" }).end(encodeMessage("hello")));
    });
    try {
      const run = await runCliProcess([
        "check",
        "--connect",
        server.url,
        "--only",
        "grpc.defaults.*,grpc.stateless.deterministic",
        "--timeout",
        "3s",
      ]);
      // The first refusal may reach the tally as the silence guard's words: it knows the target stopped.
      expect(run.stderr).toMatch(
        new RegExp(
          `^example-conformance: no verdict: --connect ${escapeRegExp(server.url)} answered none of the checks' calls ` +
            `after the set-up probes \\(\\d+ failed at the connection level; the first: ` +
            `.*(ECONNREFUSED|connections are refused).*\\)\\n$`,
        ),
      );
      expect(run.code).toBe(3);
      oneLine(run.stderr);
    } finally {
      await server.close();
    }
  });
});
