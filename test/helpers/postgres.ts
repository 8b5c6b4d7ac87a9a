// A private PostgreSQL server for tests: initdb into a temporary directory, run as an unprivileged user (postgres
// when the tests run as root, which PostgreSQL refuses), listening on 127.0.0.1 and a free port. Never a mock.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPostgres {
  /** postgres://test@127.0.0.1:PORT/test */
  url: string;
  /** Stops the server (fast shutdown: sessions ended, data kept). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
  /** A new, empty database on the same server, and its URL. */
  createDatabase(name: string): Promise<string>;
}

/** The folder with initdb and postgres, or why there is none. In CI (.ci/run installs postgresql) none is a failure. */
export function postgresBin(): { dir: string } | { missing: string } {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const dir = join(root, v, "bin");
    if (existsSync(join(dir, "initdb")) && existsSync(join(dir, "postgres"))) return { dir };
  }
  const missing = "PostgreSQL's server is not installed (Debian package postgresql)";
  if (process.env.CI === "true") throw new Error(missing);
  return { missing };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** As whom the server runs: the postgres user under root, else ourselves. */
function runAs(): { uid: number; gid: number; prefix: string[] } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  if (id.status !== 0)
    throw new Error("running as root needs the postgres user (Debian package postgresql creates it)");
  // setpriv execs the server itself (runuser would stand between), so signals reach it directly.
  return {
    uid: Number(id.stdout.trim()),
    gid: Number(gid.stdout.trim()),
    prefix: ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"],
  };
}

export async function startTestPostgres(binDir: string): Promise<TestPostgres> {
  const base = mkdtempSync(join(tmpdir(), "example-conformance-pg-"));
  const data = join(base, "data");
  const user = runAs();
  if (user) {
    chmodSync(base, 0o700);
    chownSync(base, user.uid, user.gid);
  }
  const command = (bin: string, args: string[]) =>
    user ? [...user.prefix, join(binDir, bin), ...args] : [join(binDir, bin), ...args];
  const [initCmd, ...initArgs] = command("initdb", [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "test",
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  const init = spawnSync(initCmd as string, initArgs, { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = "";

  const start = async () => {
    const [cmd, ...args] = command("postgres", [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      base,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=100",
    ]);
    child = spawn(cmd as string, args, { stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.on("data", (c: Buffer) => (log = (log + c.toString()).slice(-4000)));
    const { default: pg } = await import("pg");
    const deadline = Date.now() + 20_000;
    for (;;) {
      const client = new pg.Client({
        connectionString: `postgres://test@127.0.0.1:${port}/postgres`,
        connectionTimeoutMillis: 1000,
      });
      try {
        await client.connect();
        const exists = await client.query("select 1 from pg_database where datname = 'test'");
        if (exists.rowCount === 0) await client.query("create database test");
        await client.end();
        return;
      } catch (err) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`PostgreSQL did not start: ${String(err)}\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once("exit", () => r()));
    // SIGINT: fast shutdown, as pg_ctl stop -m fast does.
    c.kill("SIGINT");
    const timer = setTimeout(() => c.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  };
  await start();
  return {
    url: `postgres://test@127.0.0.1:${port}/test`,
    stop,
    start,
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new RangeError(`database name ${name}`);
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: `postgres://test@127.0.0.1:${port}/postgres` });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://test@127.0.0.1:${port}/${name}`;
    },
    async destroy() {
      await stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
