// "Conformant" only when every gating check was judged: a check that lacked something the user can give (a
// replica, a key) makes the run partial and names the flag; the target's own legal behaviour does not; a claim of
// the implementation answers such a need, declared, not judged.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pass, skip, type CheckDefinition } from "../../harness/check.js";
import { runConformance } from "../../harness/api/run-conformance.js";
import { startReferenceServer, type ReferenceServer } from "../../reference-server/start.js";
import { listenTracked } from "../../fixtures/_internals/listen-tracked.js";
import { cli } from "../helpers/cli.js";

const check = (id: string, outcome: Awaited<ReturnType<CheckDefinition["run"]>>): CheckDefinition => ({
  id,
  title: id,
  severity: "MUST",
  area: "contract",
  profile: "contract",
  spec: "§test",
  run: () => Promise.resolve(outcome),
});

describe("the verdict, from the checks' skips", () => {
  const judged = check("t.judged", pass("ok"));
  it("is partial when a gating check skipped for want of a flag, and names the flag", async () => {
    const report = await runConformance({
      checks: [judged, check("t.replicas", skip("no replica", "--replica"))],
      seed: 1,
    });
    expect(report.verdict).toBe("partial");
    expect(report.exitCode).toBe(0);
    expect(report.unjudged).toEqual([
      { id: "t.replicas", severity: "MUST", why: "needs", needs: "--replica", reason: "no replica" },
    ]);
    expect(report.checks.find((c) => c.id === "t.replicas")?.needs).toBe("--replica");
  });

  it("is conformant when a check skipped for the target's own legal behaviour (no flag would judge it)", async () => {
    const report = await runConformance({ checks: [judged, check("t.no-keys", skip("no key control"))], seed: 1 });
    expect(report.verdict).toBe("conformant");
    expect(report.unjudged).toMatchObject([{ id: "t.no-keys", why: "skipped" }]);
  });

  it("is conformant when a claim answers the need, and shows the claim as declared, not judged", async () => {
    const report = await runConformance({
      checks: [judged, check("t.replicas", skip("no replica", "--replica"))],
      claims: { replicas: "single" },
      seed: 1,
    });
    expect(report.verdict).toBe("conformant");
    expect(report.claims).toEqual(["replicas: single"]);
    expect(report.unjudged).toMatchObject([
      { id: "t.replicas", why: "claimed", claim: "replicas: single", needs: "--replica" },
    ]);
    expect(report.checks.find((c) => c.id === "t.replicas")?.message).toMatch(
      /^not applicable by claim \(replicas: single: declared by the implementation, not judged\)/,
    );
  });

  it("keeps a need no claim answers", async () => {
    const report = await runConformance({
      checks: [judged, check("t.key", skip("no key", "--api-key"))],
      claims: { replicas: "single" },
      seed: 1,
    });
    expect(report.verdict).toBe("partial");
  });
});

describe("check --grpc of the reference server", () => {
  let one: ReferenceServer;
  let two: ReferenceServer;
  beforeAll(async () => {
    [one, two] = await Promise.all([
      startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" }),
      startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent" }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
  });

  it("without --replica is partial, naming --replica, exit 0", async () => {
    const run = await cli(["check", "--grpc", one.grpcAddress, "--seed", "4", "--runs", "10"]);
    expect(run.code, run.stderr).toBe(0);
    const last = run.stdout.trimEnd().split("\n").at(-1);
    expect(last).toMatch(/^partial: .*could not be judged without --replica \(grpc\.stateless\.replicas\)/);
  }, 60_000);

  it("over Connect alone is partial naming --grpc: the service is a gRPC service, and gRPC's own checks went " +
    "unjudged", async () => {
    const report = await runConformance({
      grpc: { address: one.httpUrl, protocol: "connect" },
      claims: { replicas: "single" },
      seed: 4,
      runs: 10,
    });
    expect(report.verdict).toBe("partial");
    expect(report.unjudged).toContainEqual(
      expect.objectContaining({ id: "grpc.unary.single-response", why: "needs", needs: "--grpc" }),
    );
    // Connect's own checks are judged; gRPC-Web's need nothing (a server need not speak it).
    expect(report.unjudged.some((u) => u.id.startsWith("grpc-web.") && u.why === "needs")).toBe(false);
  }, 60_000);

  it("over gRPC, the checks of the optional protocols (Connect, gRPC-Web) need nothing", async () => {
    const report = await runConformance({
      grpc: { address: one.grpcAddress },
      only: ["connect.*", "grpc-web.*", "grpc.defaults.decodes"],
      seed: 4,
      runs: 5,
    });
    expect(
      report.checks
        .filter((c) => c.id.startsWith("connect.") || c.id.startsWith("grpc-web."))
        .every((c) => c.status === "skip" && c.needs === undefined),
    ).toBe(true);
  }, 60_000);

  it("with --replica is conformant", async () => {
    const run = await cli([
      "check",
      "--grpc",
      one.grpcAddress,
      "--replica",
      two.grpcAddress,
      "--seed",
      "4",
      "--runs",
      "10",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(/^conformant: /);
  }, 60_000);
});

describe("http.auth.api-key with no key given", () => {
  /**
   * A store of one message a time, open except where `guarded` says a method needs a key. A message that does not
   * exist is 404 before the key is asked for (an order the spec leaves open), so the run's credentials probe, which
   * replaces and deletes an id no target gave out, sees no refusal: only the check, on a message of its own, does.
   */
  async function server(guarded: (method: string) => boolean, keyBeforePath = false) {
    const items = new Map<string, string>();
    let next = 1;
    const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "content-type": "application/json", ...headers });
        res.end(value === undefined ? undefined : JSON.stringify(value));
      };
      const path = (req.url ?? "/").split("?")[0] as string;
      const item = /^\/messages\/([^/]+)$/.exec(path);
      const missing = item !== null && !items.has(item[1] as string);
      if ((keyBeforePath || !missing) && guarded(req.method ?? "") && req.headers["x-api-key"] !== "k")
        return json(401, { error: "key" });
      if (path === "/messages" && req.method === "GET")
        return json(
          200,
          [...items].map(([id, b]) => ({ id, body: b })),
        );
      if (path === "/messages" && req.method === "POST") {
        let parsed: { body?: unknown };
        try {
          parsed = JSON.parse(body) as { body?: unknown };
        } catch {
          return json(400, { error: "json" });
        }
        const id = String(next++);
        items.set(id, String(parsed.body));
        return json(201, { id, body: parsed.body }, { location: `/messages/${id}` });
      }
      const m = /^\/messages\/(\d+)$/.exec(path);
      if (m && items.has(m[1] as string)) {
        const id = m[1] as string;
        if (req.method === "GET") return json(200, { id, body: items.get(id) });
        if (req.method === "PUT") {
          items.set(id, String((JSON.parse(body) as { body?: unknown }).body));
          return json(200, { id, body: items.get(id) });
        }
        if (req.method === "DELETE") {
          items.delete(id);
          return json(204, undefined);
        }
      }
      return json(404, { error: "none" });
    };
    const s = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => handle(req, res, body));
    });
    return listenTracked(s);
  }

  const run = async (guarded: (method: string) => boolean, keyBeforePath = false) => {
    const s = await server(guarded, keyBeforePath);
    try {
      return await runConformance({ http: { baseUrl: `http://${s.address}` }, only: ["http.auth.api-key"], seed: 1 });
    } finally {
      await s.close();
    }
  };

  it("is not applicable to a target with no key control at all (no flag named)", async () => {
    const report = await run(() => false);
    const r = report.checks[0];
    expect(r).toMatchObject({ id: "http.auth.api-key", status: "skip" });
    expect(r?.needs).toBeUndefined();
    expect(report.unjudged.find((u) => u.id === "http.auth.api-key")?.why).toBe("skipped");
  });

  it(
    "cannot check at all (credentials, exit 5) where the key is asked for before the path, so the run's probe sees " +
      "the DELETE refused",
    async () => {
      await expect(run((method) => method === "DELETE", true)).rejects.toMatchObject({
        code: "credentials",
        message: expect.stringMatching(
          /the target wants credentials \(DELETE \/messages\/example-conformance-credentials-probe → 401\)/,
        ),
      });
    },
  );

  it("needs --api-key where some data request wants a key the run did not give", async () => {
    const report = await run((method) => method === "DELETE");
    expect(report.checks[0]).toMatchObject({ id: "http.auth.api-key", status: "skip", needs: "--api-key" });
    expect(report.checks[0]?.message).toMatch(/DELETE \/messages\/1 → 401/);
    expect(report.unjudged.find((u) => u.id === "http.auth.api-key")).toMatchObject({
      why: "needs",
      needs: "--api-key",
    });
  });
});
