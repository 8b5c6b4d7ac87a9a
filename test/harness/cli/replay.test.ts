// Replay lines rendered from the user's own argv: options as typed (one token or two), --only/--seed/--path named
// anew, secrets as placeholders, report files left out, everything else kept and shell-quoted.
import { describe, expect, it } from "vitest";
import { CHECK_TABLE } from "../../../harness/cli/check-options.js";
import { createReplayRenderer } from "../../../harness/cli/replay.js";

const render = (argv: string[], path?: string) =>
  createReplayRenderer(
    argv,
    CHECK_TABLE,
  )({ only: "grpc.stateless.replicas", seed: 7, ...(path !== undefined && { path }) });

describe("replay lines", () => {
  it("keep every flag that shapes the verdict, in the user's order, and name --only, --seed and --path anew", () => {
    expect(
      render(
        [
          "--grpc",
          "h:1",
          "--timeout=3s",
          "--runs",
          "9",
          "--strict",
          "--profile",
          "protocol",
          "--rate",
          "5",
          "--max-rpcs",
          "50",
          "--tls",
          "--ca",
          "ca.pem",
          "--authority",
          "x.example",
          "--expect-failures",
          "known.txt",
          "--only",
          "grpc.*",
          "--seed",
          "1",
          "--path",
          "0:1",
          "--replica",
          "h:2",
        ],
        "3:4",
      ),
    ).toBe(
      "npx example-conformance check --grpc h:1 --timeout 3s --runs 9 --strict --profile protocol --rate 5 " +
        "--max-rpcs 50 --tls --ca ca.pem --authority x.example --expect-failures known.txt --replica h:2 --only " +
        "grpc.stateless.replicas --seed 7 --path 3:4",
    );
  });

  it("show every secret as a placeholder, whichever way it was typed", () => {
    const line = render([
      "--http",
      "http://127.0.0.1:8/p",
      "--api-key",
      "k-1",
      "--api-key=k-2",
      "--metadata",
      "authorization=Bearer t",
      "--metadata=x-a=b c",
    ]);
    expect(line).toBe(
      "npx example-conformance check --http http://127.0.0.1:8/p --api-key '<API_KEY>' --api-key '<API_KEY>' " +
        "--metadata 'authorization=<METADATA_VALUE>' --metadata 'x-a=<METADATA_VALUE>' --only " +
        "grpc.stateless.replicas --seed 7",
    );
    expect(line).not.toMatch(/k-1|k-2|Bearer|b c/);
  });

  it("leave report files out, so a replay does not overwrite the run's reports, and quote what a shell would read", () => {
    expect(
      render([
        "--report-json",
        "r.json",
        "--report-html=r.html",
        "--reporter",
        "junit=r.xml",
        "--reporter=json",
        "--collection",
        "/my messages",
        "--wait-log",
        "ready; rm -rf ~",
      ]),
    ).toBe(
      "npx example-conformance check --collection '/my messages' --wait-log 'ready; rm -rf ~' --only " +
        "grpc.stateless.replicas --seed 7",
    );
  });
});
