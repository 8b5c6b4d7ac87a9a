// An HTTPS resource server whose certificate a private CA signed (here, the reference's HTTP interface behind a TLS
// terminator, as a deployment's proxy would be): --ca reaches every request, not only the fingerprint, and an
// https:// URL speaks TLS without --tls. A certificate the run does not trust is a set-up problem: exit 3, one line
// naming the flag that fixes it, never a failing check.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { checkVerdicts, cli } from "../../helpers/cli.js";
import { selfSignedCert, tlsFront } from "../../helpers/tls.js";

const tls = selfSignedCert();
let reference: ReferenceServer;
let front: Awaited<ReturnType<typeof tlsFront>>;

beforeAll(async () => {
  reference = await startReferenceServer({ grpcPort: 0, httpPort: 0 });
  front = await tlsFront(Number(new URL(reference.httpUrl).port), tls);
});
afterAll(async () => {
  await front.close();
  await reference.close();
});

const url = () => `https://localhost:${front.port}`;

describe("check --http https://... under a private CA", () => {
  it("trusts the CA given with --ca on every request, with the URL alone saying TLS: every HTTP check passes", async () => {
    const run = await checkVerdicts(["--http", url(), "--ca", tls.certFile, "--only", "http.*"]);
    expect(run.failed, run.stdout).toEqual([]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.report.checks.filter((c) => c.status === "pass").length).toBeGreaterThan(10);
    expect(run.stdout).not.toMatch(/unable to verify/i);
  }, 150_000);

  it("without --ca, exits 3 before any check with one line that names the cause and --ca", async () => {
    const run = await cli(["check", "--http", url(), "--only", "http.*"]);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).toMatch(
      /cannot reach https:\/\/localhost:\d+: TLS: its certificate is not signed by a CA this machine trusts \(\w+\); give the CA that signed it with --ca/,
    );
  });

  it("with another CA in --ca, exits 3 naming that file", async () => {
    const other = selfSignedCert();
    const run = await cli(["check", "--http", url(), "--ca", other.certFile, "--only", "http.*"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      new RegExp(`TLS: its certificate is not signed by the CA in --ca ${other.certFile.replace(/[/.]/g, "\\$&")}`),
    );
  });
});
