// A target that refuses every call for want of credentials ends as "cannot check" (exit 5), not a list of failures.
import * as grpc from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { startGrpcJsBase } from "../../../fixtures/broken-servers/grpc/_base/grpc-js.js";
import type { StartedServer } from "../../../fixtures/broken-servers/grpc/types.js";
import { cli } from "../../helpers/cli.js";

let server: StartedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = "s3cret";

async function start(code: number): Promise<StartedServer> {
  server = await startGrpcJsBase({
    hello: ({ message, metadata }) =>
      metadata.get("x-api-key")[0] === KEY ? (message?.body ?? "") : { code, details: "no key" },
  });
  return server;
}

describe("a target that wants credentials", () => {
  it.each([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED])(
    "refusing with %i: cannot check without them, exit 5, no check run",
    async (code) => {
      const s = await start(code);
      const run = await cli(["check", "--grpc", s.address, "--only", "grpc.*"]);
      expect(run.code).toBe(5);
      expect(run.stderr).toMatch(
        /^example-conformance: cannot check: the target wants credentials \(pass --metadata\)/,
      );
      expect(run.stdout).not.toMatch(/FAIL/);
    },
  );

  it("is checked when given them, and says the given ones were refused when they are wrong", async () => {
    const s = await start(grpc.status.UNAUTHENTICATED);
    const ok = await cli([
      "check",
      "--grpc",
      s.address,
      "--metadata",
      `x-api-key=${KEY}`,
      "--only",
      "grpc.stateless.*,grpc.defaults.*",
      "--runs",
      "5",
    ]);
    expect(ok.code).toBe(0);
    const wrong = await cli([
      "check",
      "--grpc",
      s.address,
      "--metadata",
      "x-api-key=nope",
      "--only",
      "grpc.defaults.*",
    ]);
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toMatch(/the target refused the credentials given \(--metadata x-api-key\)/);
    // The value given is the user's secret: it never reaches the output.
    expect(wrong.stderr + wrong.stdout).not.toMatch(/nope/);
  });
});
