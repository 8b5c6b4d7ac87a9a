// The runner's redactor knows the key check-client hands its client, as it knows check's --api-key: whatever a
// client check says, the key is not in the report (the client checks redact their own words too; this is the
// backstop for any that forgets).
import { describe, expect, it } from "vitest";
import { fail, type CheckDefinition } from "../../../harness/check.js";
import { describeRequest, redactor, type RecordedRequest } from "../../../harness/client/recorded-request.js";
import { runConformance } from "../../../harness/runner.js";

const KEY = "client-run-key-42";

const careless: CheckDefinition = {
  id: "client.careless",
  title: "says the key aloud",
  severity: "MUST",
  area: "client",
  profile: "contract",
  spec: "part 5",
  run: () =>
    Promise.resolve(
      fail(`the request carried ${KEY}`, { details: [`authorization: Bearer ${KEY}`], counterexample: KEY }),
    ),
};

describe("runConformance with a client run's key", () => {
  it("replaces the key in a client check's message, details and counterexample", async () => {
    const report = await runConformance({ checks: [careless], client: "./client", clientApiKey: KEY, seed: 1 });
    const [result] = report.checks;
    expect(result?.status).toBe("fail");
    expect([result?.message, ...(result?.details ?? []), result?.counterexample]).toEqual([
      "the request carried <API_KEY>",
      "authorization: Bearer <API_KEY>",
      "<API_KEY>",
    ]);
    expect(JSON.stringify(report)).not.toContain(KEY);
  });
});

describe("describeRequest with the run's key", () => {
  // A key with characters that JSON, percent- and form-encoding each write otherwise.
  const key = 'sec"ret+key 1';
  const escaped = JSON.stringify(key).slice(1, -1);
  const request = (path: string, headers: Record<string, string[]>, body: string): RecordedRequest => ({
    n: 1,
    atMs: 0,
    protocol: "http",
    method: "POST",
    path,
    headers,
    body: Buffer.from(body),
    truncated: false,
    answer: "201",
  });
  const forms = [
    key,
    escaped,
    encodeURIComponent(key),
    "sec%22ret%2Bkey+1",
    Buffer.from(key).toString("hex"),
    Buffer.from(escaped).toString("hex"),
    Buffer.from(key).toString("base64"),
  ];

  it("shows the key in no form: path (percent- or form-encoded), -bin header, JSON body's hex preview", () => {
    const lines = [
      ...describeRequest(
        request(
          `/messages?a=${encodeURIComponent(key)}`,
          { "x-k-bin": [Buffer.from(key).toString("base64")], "content-type": ["application/json"] },
          JSON.stringify({ body: key }),
        ),
        redactor(key),
        key,
      ),
      ...describeRequest(request("/messages?a=sec%22ret%2Bkey+1", {}, `{"k":"${escaped}"}`), redactor(key), key),
    ].join("\n");
    for (const form of forms) expect(lines.includes(form) ? form : "none").toBe("none");
    expect(lines).toContain("?a=<API_KEY>");
    expect(lines).toContain("x-k-bin: (base64-decoded) <API_KEY>");
    expect(lines).toContain(Buffer.from('{"body":"<API_KEY>"}').subarray(0, 24).toString("hex"));
  });

  it("does not show an encoded body's bytes at all", () => {
    const gzipped = request(
      "/messages",
      { "content-type": ["application/json"], "content-encoding": ["gzip"] },
      "whatever it holds",
    );
    expect(describeRequest(gzipped, redactor(key), key).at(-1)).toBe(
      "  body: 17 bytes, its bytes not shown (they are encoded, and could carry the API key where no redaction " +
        "sees it)",
    );
  });
});
