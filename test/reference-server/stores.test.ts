// The reference server on each store: in memory, embedded PostgreSQL (PGlite) in a data directory, and a real
// PostgreSQL server shared by replicas. The catalogue passes on each; writes race without lost updates; no
// acknowledged write is lost to SIGKILL; a database lost while serving gives 503s and then recovery.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkVerdicts } from "../helpers/cli.js";
import { postgresBin, startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { cleanUp, serve, sleep, type Served } from "../helpers/serve-process.js";

afterEach(cleanUp);

const bin = postgresBin();
let pg: TestPostgres | undefined;
const dirs: string[] = [];

beforeAll(async () => {
  if ("dir" in bin) pg = await startTestPostgres(bin.dir);
}, 60_000);

afterAll(async () => {
  await pg?.destroy();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "example-conformance-data-"));
  dirs.push(dir);
  return dir;
}

const pgMissing = "missing" in bin ? bin.missing : undefined;
/**
 * shared: the store is shared by replicas, whose test below runs the whole catalogue on one of them with the other as
 * its replica: the catalogue on that store is run there, once, not here as well.
 */
const STORES = [
  { name: "memory", url: () => "memory:", durable: false, shared: false },
  { name: "embedded (PGlite)", url: () => `pglite:${dataDir()}`, durable: true, shared: false },
  ...(pgMissing === undefined
    ? [{ name: "PostgreSQL", url: () => (pg as TestPostgres).url, durable: true, shared: true }]
    : []),
];

const base = (s: Served) => `http://127.0.0.1:${s.httpPort}`;
const JSON_TYPE = "application/json";

async function create(s: Served, body: string): Promise<{ status: number; id?: string; etag?: string }> {
  const res = await fetch(`${base(s)}/messages`, {
    method: "POST",
    headers: { "content-type": JSON_TYPE },
    body: JSON.stringify({ body }),
  });
  const text = await res.text();
  return {
    status: res.status,
    ...(res.status === 201 && { id: (JSON.parse(text) as { id: string }).id, etag: res.headers.get("etag") ?? "" }),
  };
}

async function read(s: Served, id: string): Promise<{ status: number; body?: string; etag?: string }> {
  const res = await fetch(`${base(s)}/messages/${id}`);
  const text = await res.text();
  return {
    status: res.status,
    ...(res.status === 200 && {
      body: (JSON.parse(text) as { body: string }).body,
      etag: res.headers.get("etag") ?? "",
    }),
  };
}

async function put(s: Served, id: string, body: string, ifMatch?: string): Promise<number> {
  const headers: Record<string, string> = {
    "content-type": JSON_TYPE,
    ...(ifMatch !== undefined && { "if-match": ifMatch }),
  };
  const res = await fetch(`${base(s)}/messages/${id}`, { method: "PUT", headers, body: JSON.stringify({ body }) });
  await res.arrayBuffer();
  return res.status;
}

async function remove(s: Served, id: string, ifMatch?: string): Promise<number> {
  const res = await fetch(`${base(s)}/messages/${id}`, {
    method: "DELETE",
    headers: ifMatch === undefined ? {} : { "if-match": ifMatch },
  });
  await res.arrayBuffer();
  return res.status;
}

/** Every body the collection holds, following rel=next. */
async function allBodies(s: Served): Promise<string[]> {
  const bodies: string[] = [];
  let next: string | undefined = "/messages?limit=1000";
  for (let pages = 0; next !== undefined && pages < 100; pages++) {
    const page = (await (await fetch(`${base(s)}${next}`)).json()) as {
      messages: Array<{ body: string }>;
      links: Array<{ rel: string; href: string }>;
    };
    bodies.push(...page.messages.map((m) => m.body));
    next = page.links.find((l) => l.rel === "next")?.href;
  }
  return bodies;
}

/** grpc.health.v1 Check over raw HTTP/2: 1 SERVING, 2 NOT_SERVING, or the grpc-status when the call failed. */
function health(s: Served): Promise<string> {
  return new Promise((resolve) => {
    const session = http2.connect(`http://127.0.0.1:${s.grpcPort}`);
    session.on("error", (e) => resolve(`error ${e.message}`));
    const req = session.request({
      ":method": "POST",
      ":path": "/grpc.health.v1.Health/Check",
      "content-type": "application/grpc",
      te: "trailers",
    });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("trailers", (t) => {
      const reply = Buffer.concat(chunks);
      session.close();
      resolve(
        t["grpc-status"] === "0" ? (reply[5] === 0x08 ? String(reply[6]) : "0") : `status ${String(t["grpc-status"])}`,
      );
    });
    req.end(Buffer.alloc(5));
  });
}

describe.each(STORES)("the $name store", (store) => {
  it.runIf(!store.shared)(
    "passes the gRPC and HTTP catalogue",
    async () => {
      const s = await serve(["--store", store.url()]);
      const run = await checkVerdicts(["--grpc", `127.0.0.1:${s.grpcPort}`, "--http", base(s), "--timeout", "10s"]);
      expect(run.failed).toEqual([]);
      expect(run.code).toBe(0);
    },
    120_000,
  );

  it("leaves exactly one of 20 concurrent PUTs' bodies, never brings back a message a DELETE raced, and refuses a " +
    "stale If-Match with 412 on PUT and DELETE, checked as it writes", async () => {
    const s = await serve(["--store", store.url()]);
    const { id, etag } = await create(s, "raced");
    const written = Array.from({ length: 20 }, (_, i) => `writer ${i}`);
    const statuses = await Promise.all(written.map((b) => put(s, id as string, b)));
    expect(statuses.every((c) => c === 200)).toBe(true);
    const after = await read(s, id as string);
    expect(written).toContain(after.body);
    expect(await put(s, id as string, "stale", etag)).toBe(412);
    expect(await put(s, id as string, "fresh", after.etag)).toBe(200);
    // Writers that all read one version and each say so: the store checks it as it writes, so only one wins.
    const current = (await read(s, id as string)).etag;
    const guarded = await Promise.all(
      Array.from({ length: 10 }, (_, i) => put(s, id as string, `guarded ${i}`, current)),
    );
    expect(guarded.filter((c) => c === 200)).toHaveLength(1);
    expect(guarded.filter((c) => c === 412)).toHaveLength(9);
    expect(await remove(s, id as string, current)).toBe(412);
    expect((await read(s, id as string)).body).toMatch(/^guarded \d$/);
    expect(await remove(s, id as string, (await read(s, id as string)).etag)).toBe(204);

    const victim = (await create(s, "victim")).id as string;
    const race = await Promise.all([
      remove(s, victim),
      ...Array.from({ length: 10 }, (_, i) => put(s, victim, `late ${i}`)),
    ]);
    expect(race[0]).toBe(204);
    expect(race.slice(1).every((c) => c === 200 || c === 404)).toBe(true);
    expect((await read(s, victim)).status).toBe(404);
    expect(await allBodies(s)).not.toContain(expect.stringMatching(/^(victim|late \d+)$/));
  }, 60_000);

  it.runIf(store.durable)(
    "keeps every acknowledged write when the process is killed under a write load, and serves them after a restart",
    async () => {
      const url = store.url();
      const s = await serve(["--store", url]);
      const acknowledged: string[] = [];
      let stop = false;
      const writers = Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; !stop && i < 10_000; i++) {
          const body = `durable ${w}-${i}`;
          const res = await create(s, body).catch(() => ({ status: 0 }));
          if (res.status === 201) acknowledged.push(body);
        }
      });
      await sleep(1500);
      s.child.kill("SIGKILL");
      stop = true;
      await Promise.all(writers);
      await s.exited;
      expect(acknowledged.length).toBeGreaterThan(10);
      const again = await serve(["--store", url]);
      const stored = new Set(await allBodies(again));
      const lost = acknowledged.filter((b) => !stored.has(b));
      console.log(`${store.name}: ${acknowledged.length} writes acknowledged before SIGKILL, ${lost.length} lost`);
      expect(lost).toEqual([]);
    },
    90_000,
  );
});

// Outside CI, without PostgreSQL, its store's tests are listed as skipped with what to install, like those below.
describe.runIf(pgMissing !== undefined)(`the PostgreSQL store (skipped: ${pgMissing})`, () => {
  it.skip(
    "passes the gRPC and HTTP catalogue, leaves one of racing writes, and keeps acknowledged writes through SIGKILL",
  );
});

describe.skipIf(pgMissing !== undefined)(
  `replicas on one PostgreSQL${pgMissing ? ` (skipped: ${pgMissing})` : ""}`,
  () => {
    it("started at once on an empty database, migrate it once and serve one resource space: what one creates the " +
      "other reads, replaces and deletes", async () => {
      const url = await (pg as TestPostgres).createDatabase("replicas");
      const [a, b] = await Promise.all([serve(["--store", url]), serve(["--store", url])]);
      const { id } = await create(a, "made on A");
      expect(await read(b, id as string)).toMatchObject({ status: 200, body: "made on A" });
      expect(await put(b, id as string, "changed on B")).toBe(200);
      expect(await read(a, id as string)).toMatchObject({ body: "changed on B" });
      expect(await remove(a, id as string)).toBe(204);
      expect((await read(b, id as string)).status).toBe(404);
    }, 60_000);

    it("apply the migrations once when eight open an empty database at the same moment", async () => {
      const url = await (pg as TestPostgres).createDatabase("migrations");
      // In one process, so that the eight really race (processes started together begin hundreds of ms apart).
      const { openStore } = await import("../../reference-server/http/open-store.js");
      const stores = await Promise.allSettled(Array.from({ length: 8 }, () => openStore(url, { poolSize: 1 })));
      const opened = stores.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      try {
        expect(
          stores.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason)),
        ).toEqual([]);
        const { default: pgClient } = await import("pg");
        const client = new pgClient.Client({ connectionString: url });
        await client.connect();
        try {
          expect((await client.query("select version from schema_migrations order by version")).rows).toEqual([
            { version: 1 },
          ]);
          expect((await client.query("select messages, bytes from store_usage")).rows).toEqual([
            { messages: "0", bytes: "0" },
          ]);
        } finally {
          await client.end();
        }
      } finally {
        await Promise.all(opened.map((s) => s.close()));
      }
    }, 60_000);

    // The PostgreSQL store's run of the gRPC and HTTP catalogue (the other stores run it above): every check but the
    // two replica checks asks the --grpc and --http instance alone, as a run without replicas does.
    it("pass the whole catalogue with the cross-replica checks, where two replicas on separate memory stores fail " +
      "exactly the HTTP replica check", async () => {
      const url = (pg as TestPostgres).url;
      const [a, b] = await Promise.all([serve(["--store", url]), serve(["--store", url])]);
      const shared = await checkVerdicts([
        "--grpc",
        `127.0.0.1:${a.grpcPort}`,
        "--replica",
        `127.0.0.1:${b.grpcPort}`,
        "--http",
        base(a),
        "--http-replica",
        base(b),
        "--timeout",
        "10s",
      ]);
      expect(shared.report.checks.filter((c) => /replica/.test(c.id)).map((c) => [c.id, c.status])).toEqual([
        ["grpc.stateless.replicas", "pass"],
        ["http.stateless.replicas", "pass"],
      ]);
      expect(shared.failed).toEqual([]);
      expect(shared.code).toBe(0);
      const [c, d] = await Promise.all([serve(["--store", "memory:"]), serve(["--store", "memory:"])]);
      const apart = await checkVerdicts([
        "--http",
        base(c),
        "--http-replica",
        base(d),
        "--only",
        "http.*",
        "--timeout",
        "10s",
      ]);
      expect(apart.failed).toEqual(["http.stateless.replicas"]);
    }, 120_000);

    it("answers 503 with Retry-After and NOT_SERVING while PostgreSQL is down, then recovers with nothing lost or " +
      "duplicated", async () => {
      const s = await serve(["--store", (pg as TestPostgres).url]);
      const acknowledged: string[] = [];
      const statuses = new Map<number, number>();
      let retryAfter: string | null = null;
      let phase = "before";
      const seenHealth: string[] = [];
      const writer = (async () => {
        for (let i = 0; phase !== "done" && i < 20_000; i++) {
          const body = `outage ${i}`;
          const res = await fetch(`${base(s)}/messages`, {
            method: "POST",
            headers: { "content-type": JSON_TYPE },
            body: JSON.stringify({ body }),
            signal: AbortSignal.timeout(10_000),
          });
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 201) acknowledged.push(body);
          if (res.status === 503) retryAfter = res.headers.get("retry-after");
          if (phase === "down") await sleep(20);
        }
      })();
      await sleep(500);
      await (pg as TestPostgres).stop();
      phase = "down";
      await sleep(2500);
      seenHealth.push(await health(s));
      // Reads too: a list and a single message are 503 with Retry-After while the database is away, not 500 or 404.
      const readsDown = await Promise.all(
        [`${base(s)}/messages`, `${base(s)}/messages/00000000-0000-4000-8000-000000000000`].map(async (u) => {
          const res = await fetch(u, { signal: AbortSignal.timeout(10_000) });
          await res.arrayBuffer();
          return [res.status, res.headers.get("retry-after")];
        }),
      );
      expect(readsDown).toEqual([
        [503, "1"],
        [503, "1"],
      ]);
      // And a write of its own while the database is away: the writer's request under way at the stop may span the
      // whole outage on a loaded machine, so its loop alone need not see one.
      const writeDown = await fetch(`${base(s)}/messages`, {
        method: "POST",
        headers: { "content-type": JSON_TYPE },
        body: JSON.stringify({ body: "written while down" }),
        signal: AbortSignal.timeout(10_000),
      });
      await writeDown.arrayBuffer();
      statuses.set(writeDown.status, (statuses.get(writeDown.status) ?? 0) + 1);
      expect([writeDown.status, writeDown.headers.get("retry-after")]).toEqual([503, "1"]);
      retryAfter ??= writeDown.headers.get("retry-after");
      await (pg as TestPostgres).start();
      phase = "up";
      for (let i = 0; i < 50 && (await health(s)) !== "1"; i++) await sleep(100);
      seenHealth.push(await health(s));
      const ackedBefore = acknowledged.length;
      for (let i = 0; i < 50 && acknowledged.length === ackedBefore; i++) await sleep(100);
      phase = "done";
      await writer;
      console.log(
        `PostgreSQL stopped and started under writes: ${[...statuses].map(([k, v]) => `${k}×${v}`).join(", ")}; ` +
          `health ${seenHealth.join(" then ")}`,
      );
      expect([...statuses.keys()].sort()).toEqual([201, 503]);
      expect(retryAfter).toBe("1");
      expect(seenHealth).toEqual(["2", "1"]);
      expect(acknowledged.length).toBeGreaterThan(ackedBefore);
      const stored = await allBodies(s);
      const outage = stored.filter((b) => b.startsWith("outage "));
      expect(acknowledged.filter((b) => !outage.includes(b))).toEqual([]);
      expect(new Set(outage).size).toBe(outage.length);
    }, 90_000);
  },
);

describe.skipIf(pgMissing !== undefined)(
  `serve --workers on one PostgreSQL${pgMissing ? ` (skipped: ${pgMissing})` : ""}`,
  () => {
    it("serves both ports from two processes that share the store, and stops them all on SIGTERM", async () => {
      const s = await serve(["--store", (pg as TestPostgres).url, "--workers", "2"]);
      const workers = () =>
        spawnSync("pgrep", ["-P", String(s.child.pid)], { encoding: "utf8" })
          .stdout.trim()
          .split("\n")
          .filter(Boolean);
      expect(workers()).toHaveLength(2);
      const { id } = await create(s, "made by a worker");
      // New connections go to either worker: each must read what the other stored.
      const reads = await Promise.all(
        Array.from({ length: 20 }, () =>
          fetch(`${base(s)}/messages/${id}`, { headers: { connection: "close" } }).then((r) => r.status),
        ),
      );
      expect(reads.every((c) => c === 200)).toBe(true);
      expect(await health(s)).toBe("1");
      s.child.kill("SIGTERM");
      expect(await Promise.race([s.exited, sleep(15_000).then(() => "still running after 15 s")])).toBe(0);
      expect(workers()).toEqual([]);
    }, 60_000);

    it("refuses --workers above 1 on a store the workers cannot share", async () => {
      await expect(serve(["--store", "memory:", "--workers", "2"])).rejects.toThrow(
        /--workers above 1 needs a store every worker shares/,
      );
    });
  },
);

describe.skipIf(pgMissing !== undefined)(`shutdown on PostgreSQL${pgMissing ? ` (skipped: ${pgMissing})` : ""}`, () => {
  it("on SIGTERM finishes a request still waiting on the database before it closes the pool, then exits 0", async () => {
    const url = await (pg as TestPostgres).createDatabase("drain");
    const s = await serve(["--store", url, "--shutdown-grace", "10s"]);
    const { id } = await create(s, "before shutdown");
    // Another session holds the table, so the PUT waits inside the server (its read, then its write, need the
    // database) until that session lets go, after SIGTERM.
    const { default: pgClient } = await import("pg");
    const holder = new pgClient.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("lock table messages in access exclusive mode");
      const putting = put(s, id as string, "written during shutdown");
      await sleep(300);
      s.child.kill("SIGTERM");
      await sleep(700);
      await holder.query("commit");
      expect(await putting).toBe(200);
      // Well inside pg's 10 s idle timeout: the process ends because its pool was closed, not because it idled out.
      expect(await Promise.race([s.exited, sleep(8000).then(() => "still running 8 s after SIGTERM")])).toBe(0);
      expect((await holder.query("select body from messages where id = $1", [id])).rows).toEqual([
        { body: "written during shutdown" },
      ]);
      // Its sessions end with it (a backend goes a moment after its client).
      const sessions = async () =>
        Number(
          (
            await holder.query(
              "select count(*)::int as n from pg_stat_activity where datname = 'drain' and pid <> pg_backend_pid()",
            )
          ).rows[0].n,
        );
      for (let i = 0; i < 20 && (await sessions()) > 0; i++) await sleep(100);
      expect(await sessions()).toBe(0);
    } finally {
      await holder.end();
    }
  }, 60_000);
});

describe("serve's default store", () => {
  it("is embedded and durable: with --data-dir, messages outlive a restart", async () => {
    const dir = dataDir();
    const first = await serve(["--data-dir", dir]);
    const { id } = await create(first, "kept");
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const second = await serve(["--data-dir", dir]);
    expect(await read(second, id as string)).toMatchObject({ status: 200, body: "kept" });
    // A bound, not a measure: a new store's initdb is CPU work, several times slower on a loaded 2-core machine.
  }, 180_000);
});

describe("a store that cannot be opened", () => {
  it("an unreachable PostgreSQL at start is exit 3 with one line that hides the password", async () => {
    const { spawnSync } = await import("node:child_process");
    const { PACKAGE_ROOT } = await import("../../common/paths.js");
    const run = spawnSync(
      process.execPath,
      [
        `${PACKAGE_ROOT}/bin/example-conformance.js`,
        "serve",
        "--grpc-port",
        "0",
        "--http-port",
        "0",
        "--store",
        "postgres://u:s3cret@127.0.0.1:1/db",
      ],
      { encoding: "utf8", timeout: 30_000 },
    );
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(/cannot be used/);
    expect(run.stderr).not.toMatch(/s3cret/);
    expect(run.stderr).toContain("the store postgres://u:***@127.0.0.1:1/db cannot be used: connect ECONNREFUSED");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("an embedded data directory in use by another serve is refused, naming the holder", async () => {
    const dir = dataDir();
    await serve(["--store", `pglite:${dir}`]);
    await expect(serve(["--store", `pglite:${dir}`])).rejects.toThrow(
      /the data directory \S+ is in use by example-conformance on host \S+, process \d+ in its PID namespace, started \S+, which renews its lease/,
    );
  }, 60_000);
});
