// The embedded store: PGlite (PostgreSQL in WebAssembly) in a data directory this process leases, refusing
// every use of the directory once the lease or the engine is lost, and saying in one line what is wrong with a
// directory it cannot open, leaving the directory as it was.
//
// What PGlite 0.5 does, read in its sources and tried (the guards below answer each):
// - A damaged directory (a truncated global/pg_control): PostgreSQL logs a PANIC through emscripten's printErr,
//   which PGlite prints only at a debug level (onStderr gets it here), then aborts: PGlite.create rejects with a
//   WebAssembly RuntimeError "Aborted(). Build with -sASSERTIONS for more info." and has written postmaster.pid.
// - A pgdata without PG_VERSION is taken for a new one: PGlite runs initdb and copies a fresh database over it.
// - A table that cannot grow on a full disk: ERROR, SQLSTATE 53100, and the engine goes on. A WAL segment that
//   cannot be made: PANIC, the query under way rejects, and every later one never settles (the engine is gone).
// - Unreadable files as another user: emscripten's file system reports them misleadingly ("File exists").
// - initdb (a new directory) holds the main thread about 5 s on the 2-core machine: a new directory is copied from
//   the template the build prepared instead (pgdata-template.ts), and runs initdb only when there is none.
import { EventEmitter } from "node:events";
import fs from "node:fs";
import { join, resolve } from "node:path";
import type { PGlite } from "@electric-sql/pglite";
import { fileSystemProblem, takeLease, type Lease } from "./data-dir-lease.js";
import { DurableNodeFS, durableStartParams, syncTree } from "./durable-nodefs.js";
import { readPgdataTemplate } from "./pgdata-template.js";
import { createSqlStore, migrate, type SqlDatabase } from "./sql-store.js";
import {
  DataDirError,
  DEFAULT_STORE_LIMITS,
  StoreFullError,
  StoreUnavailableError,
  type MessageStore,
  type StoreLimits,
} from "./store.js";

/**
 * What the embedded store tells the process that runs it: `notice`, a line for the operator (that a start waits
 * for a killed holder's lease to lapse); `lost`, once, when the store has stopped for good (its lease lost, or its
 * engine stopped): every request is refused from then on, and `serve` ends with the error's line. Without a
 * listener the store just refuses.
 */
export const embeddedStoreEvents = new EventEmitter<{ notice: [line: string]; lost: [error: DataDirError] }>();

/** PostgreSQL's lines that end the embedded engine: it cannot run another statement after them. */
const FATAL_LINE = /\b(PANIC|FATAL):\s+(.*)$|^Aborted\(/;
/** SQLSTATE disk_full: a statement that could not extend a file; the engine goes on. */
const DISK_FULL = "53100";
const NO_SPACE = /No space left on device|Disk quota exceeded/;
/**
 * What makes room on a full disk: deleting messages does not, since the embedded engine reclaims no space (no
 * autovacuum).
 */
const DISK_REMEDY = "free space on that disk (deleting messages does not: the embedded store reclaims none)";

/** The engine's stderr, kept in a short ring so that a failure can be named; never printed. */
function engineLog() {
  const lines: string[] = [];
  return {
    lines,
    add(text: string) {
      lines.push(text);
      if (lines.length > 50) lines.shift();
    },
    /** The last PANIC, FATAL or ERROR, without PostgreSQL's timestamp prefix. */
    cause(): string | undefined {
      for (let i = lines.length - 1; i >= 0; i--) {
        const m = /\b(PANIC|FATAL|ERROR):\s+(.*)$/.exec(lines[i] as string);
        if (m) return `${m[1]}: ${m[2]}`;
      }
      return undefined;
    },
  };
}

/** What is wrong with a directory the engine would not start on, and what to do about it. */
function openProblem(dataDir: string, cause: string): DataDirError {
  if (NO_SPACE.test(cause))
    return new DataDirError(
      "io",
      `the disk of the data directory ${dataDir} is full (PostgreSQL: ${cause}); free space on it and start ` +
        `serve again: every write acknowledged before is kept`,
    );
  if (/Permission denied|Operation not permitted/.test(cause))
    return new DataDirError(
      "denied",
      `the data directory ${dataDir} cannot be used by this user (uid ${process.getuid?.() ?? "?"}) (PostgreSQL: ` +
        `${cause}); give this user read and write access to the directory and everything in it (chown -R or ` +
        `chmod), or run serve as their owner`,
    );
  return new DataDirError(
    "damaged",
    `the data directory ${dataDir} is damaged (PostgreSQL: ${cause}); nothing in it was changed: restore it from ` +
      `a backup, or move it aside to start an empty store`,
  );
}

/**
 * A directory PGlite would take for an empty one and initialise over: files in pgdata without PG_VERSION are
 * what is left of a store, not room for a new one.
 */
function checkPgdata(dataDir: string, pgdata: string): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(pgdata);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw fileSystemProblem(dataDir, err);
  }
  if (entries.length > 0 && !entries.includes("PG_VERSION")) {
    throw new DataDirError(
      "damaged",
      `the data directory ${dataDir} is damaged: ${pgdata} holds ${entries.length} entries but no PG_VERSION, so ` +
        `it is not a whole PostgreSQL data directory; nothing in it was changed: restore it from a backup, or move ` +
        `it aside to start an empty store`,
    );
  }
}

/**
 * Every directory and file in pgdata readable and writable by this user, or "denied" naming the first that is
 * not (a volume written by another user): the engine's own words for it are misleading ("File exists").
 */
function checkAccess(dataDir: string, dir: string): void {
  let entries: fs.Dirent[];
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
    entries = fs.readdirSync(dir, { withFileTypes: true });
    for (const e of entries)
      if (!e.isDirectory()) fs.accessSync(join(dir, e.name), fs.constants.R_OK | fs.constants.W_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw fileSystemProblem(dataDir, err);
  }
  for (const e of entries) if (e.isDirectory()) checkAccess(dataDir, join(dir, e.name));
}

/** Free bytes on the disks under pgdata and its WAL (which may be mounted apart), the lesser. */
async function freeBytes(pgdata: string): Promise<number> {
  const disks = await Promise.all(
    [pgdata, join(pgdata, "pg_wal")].map((p) => fs.promises.statfs(p).catch(() => undefined)),
  );
  return Math.min(...disks.filter((d) => d !== undefined).map((d) => d.bavail * d.bsize));
}

/** Brings the schema up to date; a disk too full for it is the user's to free, said so. */
async function migrateOrFull(db: Parameters<typeof migrate>[0], dataDir: string): Promise<void> {
  try {
    await migrate(db);
  } catch (err) {
    if (err instanceof StoreFullError)
      throw new DataDirError(
        "io",
        `the disk of the data directory ${dataDir} is full: ${err.message}; free space on it and start serve again`,
        { cause: err },
      );
    throw err;
  }
}

export async function openEmbedded(dir: string, limits: StoreLimits = {}): Promise<MessageStore> {
  const dataDir = resolve(dir);
  const pgdata = join(dataDir, "pgdata");
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    throw fileSystemProblem(dataDir, err);
  }
  const lease = await takeLease(dataDir, { notice: (line) => embeddedStoreEvents.emit("notice", line) });
  // PGlite writes postmaster.pid as it starts, also when it then fails: put back what was there.
  const pidFile = join(pgdata, "postmaster.pid");
  let pidBefore: Buffer | undefined;
  const log = engineLog();
  try {
    checkPgdata(dataDir, pgdata);
    checkAccess(dataDir, pgdata);
    pidBefore = fs.existsSync(pidFile) ? fs.readFileSync(pidFile) : undefined;
    const { PGlite } = await import("@electric-sql/pglite");
    let died: ((line: string) => void) | undefined;
    const fresh = !fs.existsSync(join(pgdata, "PG_VERSION"));
    const template = fresh ? readPgdataTemplate() : undefined;
    // Acknowledged means on disk: PostgreSQL's own syncs reach it (durable-nodefs.ts says why they did not).
    const pglite = await PGlite.create({
      fs: new DurableNodeFS(pgdata),
      ...(template !== undefined ? { loadDataDir: template } : {}),
      startParams: durableStartParams(PGlite.defaultStartParams),
      onStderr: (text) => {
        log.add(text);
        if (FATAL_LINE.test(text)) died?.(text);
        return false;
      },
      onStdout: () => false,
    });
    // A new store is written by copying a prepared database in, never synced: it is, once, before the first write.
    if (fresh) syncTree(pgdata);
    const db = createEngineDatabase(
      pglite,
      lease,
      dataDir,
      pgdata,
      limits.minFreeBytes ?? DEFAULT_STORE_LIMITS.minFreeBytes,
      log,
    );
    died = db.died;
    await migrateOrFull(db, dataDir);
    db.opened();
    return createSqlStore(db, limits);
  } catch (err) {
    if (pidBefore === undefined) fs.rmSync(pidFile, { force: true });
    else fs.writeFileSync(pidFile, pidBefore);
    const leaseProblem = lease.problem();
    await lease.release();
    if (leaseProblem !== undefined) throw leaseProblem;
    if (err instanceof DataDirError) throw err;
    if ((err as NodeJS.ErrnoException).code !== undefined && typeof (err as NodeJS.ErrnoException).syscall === "string")
      throw fileSystemProblem(dataDir, err);
    const cause = log.cause() ?? (err instanceof Error ? err.message : String(err));
    throw openProblem(dataDir, cause);
  }
}

/**
 * bytea (OID 17 in every PostgreSQL) from its hex text to a Buffer in one call: PGlite's own parser calls parseInt
 * per byte, slow on the bodies the SQL store reads as bytes (sql-store.ts says why it does).
 */
const BYTEA_PARSER = { 17: (hex: string) => Buffer.from(hex.slice(2), "hex") };

/** Emscripten's abort: the engine's WebAssembly ended, and will answer nothing again. */
const isEngineAbort = (err: unknown) => err instanceof Error && err.name === "RuntimeError";

/** One engine's state as the store's database: what it needs, whether it was lost, and its one lane of calls. */
interface Engine {
  pglite: PGlite;
  lease: Lease;
  dataDir: string;
  pgdata: string;
  minFreeBytes: number;
  log: ReturnType<typeof engineLog>;
  lost: DataDirError | undefined;
  /** Until the store is returned, a loss fails the open instead of being announced. */
  opened: boolean;
  /** Settles (rejected) when the store is lost, so that a call the dead engine will never answer is refused. */
  gone: Promise<never>;
  markLost: (error: DataDirError) => void;
  lane: Promise<unknown>;
}

/**
 * The engine as the SQL store's database. One call at a time, each begun only after the lease was found fresh
 * (the argument is in data-dir-lease.ts); a call that would be answered after the lease or the engine was lost
 * is refused (503) instead, and nothing touches the engine again.
 */
function createEngineDatabase(
  pglite: PGlite,
  lease: Lease,
  dataDir: string,
  pgdata: string,
  minFreeBytes: number,
  log: ReturnType<typeof engineLog>,
): SqlDatabase & { died(line: string): void; opened(): void } {
  let markLost!: (error: DataDirError) => void;
  const gone = new Promise<never>((_, reject) => {
    markLost = (error) => {
      if (engine.lost !== undefined) return;
      engine.lost = error;
      reject(new StoreUnavailableError(error.message, { cause: error }));
      // A dead engine writes nothing more: the next server need not wait for the lease to lapse.
      if (error.problem !== "lost") lease.releaseNow();
      if (engine.opened) embeddedStoreEvents.emit("lost", error);
    };
  });
  gone.catch(() => undefined);
  const engine: Engine = {
    pglite,
    lease,
    dataDir,
    pgdata,
    minFreeBytes,
    log,
    lost: undefined,
    opened: false,
    gone,
    markLost,
    lane: Promise.resolve(),
  };
  lease.onLost((error) => engine.markLost(error));
  return {
    died: (line) => died(engine, line),
    opened() {
      engine.opened = true;
      if (engine.lost !== undefined) embeddedStoreEvents.emit("lost", engine.lost);
    },
    query: (sql, params) => serially(engine, () => engineQuery(engine, sql, params)),
    transaction: (work) => serially(engine, () => inTransaction(engine, work)),
    ensureRoom: (bytes) => ensureRoom(engine, bytes),
    async close() {
      // A lost lease may be a successor's by now, and a clean shutdown writes a checkpoint: leave both alone.
      if (engine.lost !== undefined && engine.lost.problem === "lost") return;
      if (engine.lost === undefined) {
        await serially(engine, () => pglite.close()).catch(() => undefined);
        await lease.release();
      }
    },
    // In the process: it cannot be unreachable, only broken.
    isUnavailable: () => false,
  };
}

function died(engine: Engine, line: string): void {
  const cause = engine.log.cause() ?? line;
  const full = NO_SPACE.test(cause);
  engine.markLost(
    new DataDirError(
      "io",
      `the embedded PostgreSQL in the data directory ${engine.dataDir} stopped ` +
        `(${cause})${full ? ": its disk is full; free space on it" : ""}, and start serve again: every write ` +
        `acknowledged before is kept`,
    ),
  );
}

/** Throws unless the engine may be used now: synchronously, right before the call into it. */
function fence(engine: Engine): void {
  const problem = engine.lost ?? engine.lease.problem();
  if (problem !== undefined) {
    engine.markLost(problem);
    throw new StoreUnavailableError(problem.message, { cause: problem });
  }
}

/** What an error from the engine is to the store: unavailable once lost or aborted, full when its disk is. */
function failure(engine: Engine, err: unknown): unknown {
  if (engine.lost !== undefined) return new StoreUnavailableError(engine.lost.message, { cause: err });
  if (isEngineAbort(err)) {
    died(engine, (err as Error).message);
    return new StoreUnavailableError((engine.lost as DataDirError | undefined)?.message ?? (err as Error).message, {
      cause: err,
    });
  }
  const e = err as { code?: unknown; message?: unknown };
  if (e.code === DISK_FULL || NO_SPACE.test(String(e.message))) {
    return new StoreFullError(`the disk of the data directory ${engine.dataDir} is full (${String(e.message)})`, {
      cause: err,
      remedy: DISK_REMEDY,
    });
  }
  return err;
}

/** One call at a time on the engine's lane, fenced before it begins and before its answer is given. */
function serially<T>(engine: Engine, work: () => Promise<T>): Promise<T> {
  const run = engine.lane.then(() => {
    fence(engine);
    return work();
  });
  engine.lane = run.catch(() => undefined);
  return Promise.race([run, engine.gone]).then(
    (result) => {
      fence(engine);
      return result;
    },
    (err: unknown) => {
      throw failure(engine, err);
    },
  );
}

async function engineQuery<R>(engine: Engine, sql: string, params: readonly unknown[] = []): Promise<{ rows: R[] }> {
  return { rows: (await engine.pglite.query<R>(sql, [...params], { parsers: BYTEA_PARSER })).rows };
}

/**
 * By hand rather than pglite.transaction, which rolls back after any error: after a lost lease not even a
 * ROLLBACK may reach the engine. The lane keeps every other call out until COMMIT or ROLLBACK.
 */
async function inTransaction<T>(engine: Engine, work: (tx: Pick<SqlDatabase, "query">) => Promise<T>): Promise<T> {
  const { pglite } = engine;
  await pglite.exec("begin");
  try {
    const result = await work({
      query: (sql, params) => {
        fence(engine);
        return engineQuery(engine, sql, params);
      },
    });
    fence(engine);
    await pglite.exec("commit");
    return result;
  } catch (err) {
    if (engine.lost === undefined && !isEngineAbort(err)) await pglite.exec("rollback").catch(() => undefined);
    throw err;
  }
}

async function ensureRoom(engine: Engine, bytes: number): Promise<void> {
  const { minFreeBytes, dataDir } = engine;
  if (minFreeBytes === 0) return;
  const free = await freeBytes(engine.pgdata);
  // A body is written at least twice: into the WAL and into the table.
  if (free - 2 * bytes < minFreeBytes) {
    throw new StoreFullError(
      `the disk of the data directory ${dataDir} has ${Math.floor(free / 1048576)} MiB free, and keeps ` +
        `${Math.floor(minFreeBytes / 1048576)} MiB in reserve (--store-min-free-mib)`,
      { remedy: DISK_REMEDY },
    );
  }
}
