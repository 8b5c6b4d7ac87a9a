// A create whose COMMIT was sent to PostgreSQL and whose answer was lost with the connection (a restart, a failover,
// a proxy's idle cut) may have committed: it is answered 201, once, never 503, since a client that retries a 503 as
// told would store the message twice. A proxy between the reference and a real PostgreSQL drops the connection
// either right after passing COMMIT on (it committed) or right before (it did not).
import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { postgresBin, startTestPostgres, type TestPostgres } from "../helpers/postgres.js";
import { cleanUp, serve, type Served } from "../helpers/serve-process.js";

afterEach(cleanUp);

const bin = postgresBin();
const pgMissing = "missing" in bin ? bin.missing : undefined;
let pg: TestPostgres | undefined;
let proxy: CommitCutter | undefined;

interface CommitCutter {
  port: number;
  /** The next COMMIT's connection is cut: "after" it reached PostgreSQL (before its answer), or "before" it did. */
  cutNext(when: "after" | "before"): void;
  /** Cuts made so far. */
  cuts(): number;
  close(): Promise<void>;
}

/** A simple-query COMMIT as the pg driver sends it: 'Q', its length, "commit", NUL. */
const isCommit = (chunk: Buffer) => chunk[0] === 0x51 && /^commit\0$/i.test(chunk.subarray(5).toString("latin1"));

function startCommitCutter(pgPort: number): Promise<CommitCutter> {
  let armed: "after" | "before" | undefined;
  let cuts = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(pgPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => (sockets.delete(s), client.destroy(), upstream.destroy()));
    }
    let cutOnAnswer = false;
    const cut = () => (cuts++, client.destroy(), upstream.destroy());
    client.on("data", (chunk: Buffer) => {
      if (armed !== undefined && isCommit(chunk)) {
        const when = armed;
        armed = undefined;
        if (when === "before") return cut();
        cutOnAnswer = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => (cutOnAnswer ? cut() : client.write(chunk)));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        cutNext: (when) => void (armed = when),
        cuts: () => cuts,
        close: () => new Promise<void>((done) => (sockets.forEach((s) => s.destroy()), server.close(() => done()))),
      }),
    ),
  );
}

beforeAll(async () => {
  if ("dir" in bin) {
    pg = await startTestPostgres(bin.dir);
    proxy = await startCommitCutter(Number(new URL(pg.url).port));
  }
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await pg?.destroy();
});

const base = (s: Served) => `http://127.0.0.1:${s.httpPort}`;

async function stored(s: Served, body: string): Promise<string[]> {
  const res = await fetch(`${base(s)}/messages?body=${encodeURIComponent(body)}`, {
    signal: AbortSignal.timeout(10_000),
  });
  return ((await res.json()) as { messages: { id: string }[] }).messages.map((m) => m.id);
}

describe.skipIf(pgMissing !== undefined)(
  `a create whose COMMIT went unanswered, on PostgreSQL${pgMissing ? ` (skipped: ${pgMissing})` : ""}`,
  () => {
    it.each(["after", "before"] as const)(
      "is answered 201 once and stored once when the connection is cut %s COMMIT reached PostgreSQL",
      async (when) => {
        const url = new URL((pg as TestPostgres).url);
        url.port = String((proxy as CommitCutter).port);
        const s = await serve(["--store", url.toString()]);
        const body = `cut ${when} commit`;
        const cutsBefore = (proxy as CommitCutter).cuts();
        (proxy as CommitCutter).cutNext(when);
        const res = await fetch(`${base(s)}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ body }),
          signal: AbortSignal.timeout(30_000),
        });
        const answer = (await res.json()) as { id?: string };
        expect((proxy as CommitCutter).cuts()).toBe(cutsBefore + 1);
        expect(res.status).toBe(201);
        expect(await stored(s, body)).toEqual([answer.id]);
      },
      60_000,
    );
  },
);
