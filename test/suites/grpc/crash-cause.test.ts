// A server that dies on one input, checked with calls side by side (the default run): every check that then says the
// server stopped answering names that input, and no property reports an artefact shrunk against a dead server.
import { describe, expect, it } from "vitest";
import { brokenProcess } from "../../../fixtures/broken-servers/grpc/_base/process.js";
import { contractChecks } from "../../../suites/index.js";
import { checkVerdicts } from "../../helpers/cli.js";
import { skipIfMissing } from "../../helpers/toolchain.js";

describe.each(["go", "python"] as const)("crash-on-nul on %s, checks side by side", (stack) => {
  it("names the input with NUL wherever it says the server stopped answering", async (t) => {
    const broken = brokenProcess(stack, "crash-on-nul", "the process exits on a body containing NUL", []);
    await skipIfMissing(broken, (why) => t.skip(why));
    const started = await broken.start();
    try {
      const run = await checkVerdicts([
        "--grpc",
        started.address,
        "--skip",
        contractChecks.map((c) => c.id).join(","),
        "--seed",
        "3",
        "--runs",
        "25",
      ]);
      const stopped = run.report.checks.filter((c) => /stopped answering/.test(c.message));
      expect(stopped.length).toBeGreaterThan(0);
      // Every request the server never answered before it went silent is named, likeliest first (the first few in the
      // message, each in the details with what replays it): the one with NUL among them, whichever call came back
      // first.
      for (const c of stopped)
        expect([c.message, c.counterexample ?? "", ...(c.details ?? [])].join("\n"), c.id).toMatch(/\\u0000/);
      for (const c of stopped.filter((s) => s.details?.some((d) => /^requests the target never answered/.test(d)))) {
        expect(
          c.details?.find((d) => /\\u0000/.test(d)),
          c.id,
        ).toMatch(/grpcurl: grpcurl -plaintext .* -d .*\\u0000/);
      }
      // A connection the crash dropped is no receive limit: a limit passed is one the server refused with a status.
      const limit = run.report.checks.find((c) => c.id === "grpc.limits.large-message");
      if (limit?.status === "pass") expect(limit.message).toMatch(/RESOURCE_EXHAUSTED|no receive limit/);
      // Not a counterexample found by shrinking against a dead server.
      expect(run.report.checks.find((c) => c.id === "grpc.strings.unicode")?.counterexample ?? "").not.toBe(
        'body "" (0 UTF-16 units)',
      );
    } finally {
      await started.close();
    }
  }, 300_000);
});
