// TLS mistakes are set-up problems, named: exit 3 before any check, one line that says the cause and the flag that
// fixes it, never "does not speak HTTP/2" and never an OpenSSL source path. And a Connect server over TLS that speaks
// HTTP/1.1 only (a proxy without http2 on its listener) is reached: Connect and gRPC-Web run over HTTP/1.1.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { checkVerdicts, cli } from "../../helpers/cli.js";
import { selfSignedCert, tlsFront } from "../../helpers/tls.js";

const server = selfSignedCert();
const client = selfSignedCert();
let reference: ReferenceServer;
let http1Only: Awaited<ReturnType<typeof tlsFront>>;
let wantsCert: Awaited<ReturnType<typeof tlsFront>>;

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  http1Only = await tlsFront(Number(new URL(reference.httpUrl).port), server);
  const grpcPort = Number(reference.grpcAddress.split(":")[1]);
  // Mutual TLS in front of gRPC: only a certificate the client CA signed is let through.
  wantsCert = await tlsFront(grpcPort, server, {
    ALPNProtocols: ["h2"],
    requestCert: true,
    rejectUnauthorized: true,
    ca: client.cert,
  });
});
afterAll(async () => {
  await http1Only.close();
  await wantsCert.close();
  await reference.close();
});

const oneLine = (run: { code: number; stdout: string; stderr: string }) => {
  expect(run.code, run.stderr).toBe(3);
  expect(run.stdout).toBe("");
  expect(run.stderr.trim().split("\n")).toHaveLength(1);
  expect(run.stderr).not.toMatch(/deps\/openssl|does not speak HTTP\/2/);
};

describe("TLS mistakes, each exit 3 in one line naming the fix", () => {
  it("a gRPC server under a CA the run does not trust: --ca", async () => {
    const run = await cli(["check", "--grpc", `localhost:${wantsCert.port}`, "--tls"]);
    oneLine(run);
    expect(run.stderr).toMatch(
      /TLS: its certificate is not signed by a CA this machine trusts \(\w+\); give the CA that signed it with --ca/,
    );
  });

  it("a gRPC server that wants a client certificate, given none: --cert and --key", async () => {
    const run = await cli(["check", "--grpc", `localhost:${wantsCert.port}`, "--tls", "--ca", server.certFile]);
    oneLine(run);
    expect(run.stderr).toMatch(
      /TLS: the server wants a client certificate \(\w+\); give it with --cert and --key|TLS: the connection was reset during the handshake/,
    );
  });

  it("a gRPC server that refuses the client certificate given: names --cert", async () => {
    const stranger = selfSignedCert();
    const run = await cli([
      "check",
      "--grpc",
      `localhost:${wantsCert.port}`,
      "--tls",
      "--ca",
      server.certFile,
      "--cert",
      stranger.certFile,
      "--key",
      stranger.keyFile,
    ]);
    oneLine(run);
    expect(run.stderr).toMatch(
      new RegExp(
        `TLS: (the server refused the client certificate in --cert \\S+|the server closed the connection right ` +
          `after the handshake, before any byte: did it refuse the client certificate in --cert ` +
          `${stranger.certFile.replace(/[/.]/g, "\\$&")}\\?)`,
      ),
    );
  });

  it("TLS asked of a plaintext port: leave --tls out", async () => {
    const run = await cli(["check", "--grpc", reference.grpcAddress, "--tls"]);
    oneLine(run);
    expect(run.stderr).toMatch(/TLS: .*(not TLS|reset).*/);
  });

  it("an https:// URL at a plaintext port: use http://", async () => {
    const run = await cli(["check", "--http", reference.httpUrl.replace("http://", "https://"), "--only", "http.*"]);
    oneLine(run);
    expect(run.stderr).toMatch(
      /TLS: the answer to the handshake is not TLS \(\w+\): a plaintext port\? then use http:\/\//,
    );
  });
});

describe("Connect over TLS with HTTP/1.1 only", () => {
  it("is reached and judged: the probe offers h2 and http/1.1 by ALPN", async () => {
    const run = await checkVerdicts([
      "--connect",
      `https://localhost:${http1Only.port}`,
      "--ca",
      server.certFile,
      "--only",
      "grpc.unary.*,grpc.defaults.*",
    ]);
    expect(run.failed, run.stdout + run.stderr).toEqual([]);
    expect(run.report.checks.some((c) => c.status === "pass")).toBe(true);
  });
});
