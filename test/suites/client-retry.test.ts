// client.retry.unavailable's rule without a clock: recorded runs made by hand, the retry's gap chosen, so what the
// judge decides is what its rule says (the end-to-end run of a client retrying without pause is in
// test/harness/cli/check-client-paths.test.ts).
import { describe, expect, it } from "vitest";
import type { RecordedRequest } from "../../harness/client/recorded-request.js";
import { redactor } from "../../harness/client/recorded-request.js";
import { HELLO_PATH } from "../../harness/client/recording-servers.js";
import type { ScenarioRun } from "../../harness/client/run-scenario.js";
import { SCENARIOS, type ScenarioName } from "../../harness/client/scenarios.js";
import { retryUnavailable } from "../../suites/client/retry-unavailable.js";

const hello = (n: number, atMs: number, answer: string, answeredAtMs = atMs + 1): RecordedRequest => ({
  n,
  atMs,
  answeredAtMs,
  protocol: "grpc",
  method: "POST",
  path: HELLO_PATH,
  headers: { "content-type": ["application/grpc"] },
  body: new Uint8Array(),
  truncated: false,
  helloIndex: n - 1,
  answer,
});

function run(scenario: ScenarioName, requests: RecordedRequest[]): ScenarioRun {
  return {
    scenario: SCENARIOS[scenario],
    client: { exitCode: 0, signal: null, hung: false, durationMs: 50, stdout: "", stderr: "" },
    requests,
    received: requests.length,
    timeoutMs: 10_000,
    redact: redactor(undefined),
  };
}

const usual = run("usual", [hello(1, 5, "OK")]);
const judge = (requests: RecordedRequest[]) =>
  retryUnavailable.judge(run("unavailable-once", requests), () => Promise.resolve(usual));

describe("client.retry.unavailable", () => {
  it("one retry passes however soon it came (a jittered first backoff may be near 0 ms), and its gap is said", async () => {
    const outcome = await judge([hello(1, 10, "UNAVAILABLE", 11), hello(2, 12, "OK")]);
    expect(outcome.status).toBe("pass");
    expect(outcome.message).toBe(
      "retried after UNAVAILABLE (2 Hello calls, the retry 1 ms after the UNAVAILABLE answer)",
    );
  });

  it("the gap is measured from the answer's writing, whenever the first call arrived", async () => {
    // The first call arrived long before its answer was written: the gap is the answer's, not the arrival's.
    const outcome = await judge([hello(1, 0, "UNAVAILABLE", 100), hello(2, 110, "OK")]);
    expect(outcome.status).toBe("pass");
    expect(outcome.message).toBe(
      "retried after UNAVAILABLE (2 Hello calls, the retry 10 ms after the UNAVAILABLE answer)",
    );
  });

  it("no retry passes, and retries past the bound fail as unbounded", async () => {
    expect((await judge([hello(1, 10, "UNAVAILABLE")])).status).toBe("pass");
    const many = [hello(1, 0, "UNAVAILABLE"), ...[2, 3, 4, 5, 6].map((n) => hello(n, n * 200, "OK"))];
    expect((await judge(many)).message).toMatch(/^the client sent 6 Hello calls where it sends 1 when all succeed/);
  });
});
