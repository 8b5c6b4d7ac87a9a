// rpc.cross-protocol.equivalent: a server that answers one transport differently fails exactly it; a legal one that
// serves three protocols passes it; the built-in reference (all three, no flag) judges and passes it; a run of several
// RPC targets sends each check over the target of its protocol, and its replay line keeps only that target's flag.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { missingGo } from "../../fixtures/implementations/index.js";
import { startGoGrpcWeb } from "../../fixtures/implementations/protocols.js";
import { catalogue } from "../../suites/index.js";
import { checkVerdicts } from "../helpers/cli.js";
import { skipIfMissing } from "../helpers/toolchain.js";

const ID = "rpc.cross-protocol.equivalent";
const contractIds = catalogue
  .filter((c) => c.area === "contract")
  .map((c) => c.id)
  .join(",");
const go = { name: "go-grpc-web", missing: () => missingGo() };
const targets = (s: { grpc: string; httpUrl: string }) => [
  "--grpc",
  s.grpc,
  "--connect",
  s.httpUrl,
  "--grpc-web",
  s.httpUrl,
];

/** The catalogue over the three targets, contract checks aside (they read the contract, not the server). */
const gatingRun = (s: { grpc: string; httpUrl: string } | undefined) =>
  checkVerdicts([...targets(s as NonNullable<typeof s>), "--skip", contractIds, "--seed", "7", "--runs", "10"]);

describe(ID, () => {
  let broken: Awaited<ReturnType<typeof startGoGrpcWeb>> | undefined;
  let legal: Awaited<ReturnType<typeof startGoGrpcWeb>> | undefined;
  let halfServed: Awaited<ReturnType<typeof startGoGrpcWeb>> | undefined;
  beforeAll(async () => {
    if ((await missingGo()) !== undefined) return;
    [broken, legal, halfServed] = await Promise.all([
      startGoGrpcWeb("cross-grpc-web-reply"),
      startGoGrpcWeb(),
      startGoGrpcWeb("cross-connect-415"),
    ]);
  }, 120_000);
  afterAll(async () => void (await Promise.all([broken?.close(), legal?.close(), halfServed?.close()])));

  it("a server whose gRPC-Web reply differs fails exactly it; each check runs over its own protocol's target", async (t) => {
    await skipIfMissing(go, (why) => t.skip(why));
    const run = await gatingRun(broken);
    // The gating failures: grpc-go's own protocol-profile findings on its gRPC port (gzip, cardinality) do not gate.
    expect(run.report.checks.filter((c) => c.gating).map((c) => c.id)).toEqual([ID]);
    const cross = run.report.checks.find((c) => c.id === ID);
    // The request and each transport's reply are named, and the replay keeps every RPC target.
    expect(cross?.message).toMatch(
      /a body of several words \(request [0-9a-f]+\): grpc OK .*contract one operation.*; grpc-web OK .*one operation, one contract/,
    );
    expect(cross?.replay).toMatch(/--grpc \S+ --connect \S+ --grpc-web \S+/);
    // Nothing skipped for want of a target that was given: connect.* ran over --connect, grpc-web.* over --grpc-web.
    const status = (id: string) => run.report.checks.find((c) => c.id === id)?.status;
    expect([
      status("connect.unary.content-type"),
      status("grpc-web.content-type"),
      status("grpc.unary.single-response"),
    ]).toEqual(["pass", "pass", "pass"]);
    const replay = run.report.checks.find((c) => c.id === "connect.unary.content-type")?.replay ?? "";
    expect(replay).toMatch(/--connect /);
    expect(replay).not.toMatch(/--grpc(-web)? /);
  }, 180_000);

  // Issue 44's mutants connect: false and grpcWeb: false of the reference's connect-es options: its lean path still
  // served the plain calls, and connect-es, its protocol off, answered every refusal 415.
  it("a server whose Connect refusals are HTTP 415, its plain calls served, fails exactly it", async (t) => {
    await skipIfMissing(go, (why) => t.skip(why));
    const run = await gatingRun(halfServed);
    expect(run.report.checks.filter((c) => c.gating).map((c) => c.id)).toEqual([ID]);
    expect(run.report.checks.find((c) => c.id === ID)?.message).toMatch(
      /not valid UTF-8 .*: over connect, HTTP 415 Unsupported Media Type for "application\/proto", the content type it served 200 for a body of several words/,
    );
  }, 180_000);

  it("a legal server that serves the three protocols alike passes it", async (t) => {
    await skipIfMissing(go, (why) => t.skip(why));
    const run = await checkVerdicts([...targets(legal as NonNullable<typeof legal>), "--only", ID, "--seed", "7"]);
    expect(run.report.checks.find((c) => c.id === ID)?.status).toBe("pass");
  }, 60_000);

  it("check with no target judges it over the reference's three protocols, and it passes", async () => {
    const run = await checkVerdicts(["--only", ID, "--seed", "7"]);
    expect(run.report.checks.find((c) => c.id === ID)?.message).toMatch(
      /^6 requests served or refused alike, with the same replies, over grpc, connect, grpc-web/,
    );
  }, 60_000);
});
