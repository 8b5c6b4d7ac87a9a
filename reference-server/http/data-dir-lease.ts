// The embedded store's lease on its data directory: one writer at a time, across processes, PID namespaces
// (containers) and hosts that share the directory, and a killed holder's lease taken over after a stated bound.
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import lockfile from "proper-lockfile";
import { DataDirError, type DataDirProblem } from "./store.js";

/*
 * Why this holds where the PID file it replaces did not.
 *
 * The lease is proper-lockfile's: a directory made with mkdir (atomic on local file systems and NFS), whose mtime
 * the holder sets to its clock's time every LEASE_RENEW_MS. Nobody reads a PID: in a PID namespace every
 * container's node is process 1, so a PID says nothing about who holds the directory.
 *
 * A successor takes the lease over only when its mtime is older than LEASE_STALE_MS by its own clock (proper-
 * lockfile removes the stale directory and makes its own). Before that, a second server watches the mtime: if it
 * moves, the holder is alive and the second server refuses, naming the holder from the holder file beside the
 * lease; if it stays, the second server says so on stderr and waits for the lease to lapse, then takes it.
 *
 * Never two writers. The holder touches the directory (any call into PostgreSQL, which may write on a read too)
 * only after `problem()` found its lease fresh: its last renewal, by the mtime it wrote, less than
 * LEASE_STALE_MS - LEASE_MARGIN_MS ago by the same clock a successor reads the mtime with. A successor needs
 * the mtime to be more than LEASE_STALE_MS old, so while the holder may write, nobody may take over, with
 * LEASE_MARGIN_MS to spare. A holder that could not renew in time (its event loop was blocked, the process was
 * stopped with SIGSTOP or frozen by a suspended VM, the disk failed) finds its lease stale at its next call and
 * is lost for good: it never renews again (the renewal itself refuses a lapsed lease, so it cannot refresh a
 * successor's directory by mistake), never removes the lease (it may be a successor's by now), and `serve`
 * exits with its line without closing the engine, since a clean shutdown writes a checkpoint. proper-lockfile's
 * own check (the mtime is no longer the one it wrote: the lease was taken over) reports the same loss.
 *
 * Two successors racing for one stale lease: proper-lockfile's takeover (see the lease's stat, remove, mkdir)
 * can let the slower one remove the faster one's new lease. So a new holder writes a random token into the
 * holder file (write and rename: the last one wins), waits SETTLE_MS, and keeps the lease only if the token is
 * still its own; the other backs out without removing anything and refuses, naming the winner.
 *
 * What remains, as with any lease the storage does not enforce: a process frozen for more than LEASE_MARGIN_MS
 * between its check and the end of one statement (microtasks only: no timer or I/O runs in between), and clocks
 * that differ by more than LEASE_MARGIN_MS between hosts sharing the directory over a network file system.
 */

/** A lease not renewed for this long may be taken over: the longest a restart after a SIGKILL waits. */
export const LEASE_STALE_MS = 10_000;
/** How often the holder renews its lease. */
export const LEASE_RENEW_MS = 1_000;
/** The holder stops touching the directory this long before its lease could be taken over. */
const LEASE_MARGIN_MS = 2_000;
/** How long a new holder waits before it checks that no racer took the lease at the same moment. */
const SETTLE_MS = 1_000;
/** How often a server waiting for a lease looks at it. */
const WATCH_MS = 250;

const LEASE_NAME = "example-conformance.lease";
const HOLDER_NAME = "example-conformance.holder.json";
/** Where versions before the lease kept a bare PID. */
const OLD_LOCK_NAME = "example-conformance.lock";

interface Holder {
  host: string;
  pid: number;
  started: string;
  token: string;
}

export interface Lease {
  /**
   * Why the lease is not (or no longer) ours, or undefined while it is fresh. Synchronous: call it right before each
   * use of the directory.
   */
  problem(): DataDirError | undefined;
  /** Called once, when the lease is found lost (taken over, or not renewed in time). */
  onLost(listener: (error: DataDirError) => void): void;
  /** Gives the lease back; a lost lease is left as it is (it may be a successor's). */
  release(): Promise<void>;
  /** Gives the lease back at once, for a process about to exit whose engine is gone; a lost lease is left as it is. */
  releaseNow(): void;
}

export interface LeaseOptions {
  /** A line for the operator (without a newline), e.g. that the start waits for a killed holder's lease to lapse. */
  notice(line: string): void;
}

/** What the lease's thread tells the main one. */
type FromLeaseThread =
  | { type: "notice"; line: string }
  | { type: "held"; token: string }
  | { type: "refused"; problem: DataDirProblem; message: string }
  | { type: "lost"; message: string }
  | { type: "released" };

interface LeaseThreadData {
  leaseFor: string;
  /** [0]: the mtime (ms) the lease was last renewed to; [1]: 1 once the lease is lost. Shared by both threads. */
  cells: BigInt64Array;
}

const RENEWED = 0;
const LOST = 1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** Whether a lease last renewed to this mtime may no longer be used: the rule both threads follow. */
function lapsed(cells: BigInt64Array): boolean {
  return (
    Atomics.load(cells, LOST) !== 0n ||
    Date.now() - Number(Atomics.load(cells, RENEWED)) >= LEASE_STALE_MS - LEASE_MARGIN_MS
  );
}

function lapsedMessage(dataDir: string, cells: BigInt64Array): string {
  const age = Date.now() - Number(Atomics.load(cells, RENEWED));
  return (
    `the data directory ${dataDir}: this server's lease was not renewed for ${seconds(age)} (the process was ` +
    `stopped, or its disk did not answer), so another server may have taken it over after ` +
    `${seconds(LEASE_STALE_MS)}; stopping without another write`
  );
}

/**
 * Takes the data directory's lease, waiting for a killed or frozen holder's lease to lapse (at most
 * LEASE_STALE_MS and a few watches), or throws DataDirError: "in-use" naming a holder that renews its lease.
 * The lease is renewed from a thread of its own, so that a main thread busy for seconds (PostgreSQL's initdb
 * holds it for about 5 s) keeps it; a stopped process stops both threads.
 */
export async function takeLease(dataDir: string, options: LeaseOptions): Promise<Lease> {
  const cells = new BigInt64Array(new SharedArrayBuffer(16));
  const data: LeaseThreadData = { leaseFor: dataDir, cells };
  const worker = new Worker(new URL(import.meta.url), { workerData: data });
  // A safety net only: every path gives the lease back, which ends the thread.
  worker.unref();
  let lost: DataDirError | undefined;
  const listeners: Array<(error: DataDirError) => void> = [];
  const lose = (error: DataDirError) => {
    if (lost !== undefined) return;
    lost = error;
    Atomics.store(cells, LOST, 1n);
    for (const l of listeners.splice(0)) l(error);
  };
  let token = "";
  let releasing = false;
  let released: (() => void) | undefined;
  const held = new Promise<void>((resolve, reject) => {
    worker.on("message", (m: FromLeaseThread) => {
      if (m.type === "notice") options.notice(m.line);
      else if (m.type === "held") {
        token = m.token;
        resolve();
      } else if (m.type === "refused") reject(new DataDirError(m.problem, m.message));
      else if (m.type === "lost") lose(new DataDirError("lost", m.message));
      else released?.();
    });
    const ended = (why: string) => {
      if (releasing) return released?.();
      reject(new DataDirError("io", `the data directory ${dataDir}: the lease's thread ended (${why})`));
      lose(
        new DataDirError(
          "lost",
          `the data directory ${dataDir}: this server's lease is no longer renewed (its thread ended: ${why}); ` +
            `stopping without another write`,
        ),
      );
      released?.();
    };
    worker.on("error", (err) => ended(err.message));
    worker.on("exit", (code) => ended(`exit ${code}`));
  });
  await held;
  const holderPath = join(dataDir, HOLDER_NAME);
  return {
    problem() {
      if (lost === undefined && lapsed(cells)) lose(new DataDirError("lost", lapsedMessage(dataDir, cells)));
      return lost;
    },
    onLost(listener) {
      if (lost !== undefined) listener(lost);
      else listeners.push(listener);
    },
    async release() {
      if (lost !== undefined) return;
      releasing = true;
      const done = new Promise<void>((r) => (released = r));
      worker.postMessage("release");
      await done;
    },
    releaseNow() {
      if (lost !== undefined) return;
      // The thread may renew no more, nor remove anything: the lease is given back here, and is not ours after.
      lost = new DataDirError("lost", `the data directory ${dataDir}: this server gave its lease back`);
      Atomics.store(cells, LOST, 1n);
      if (readHolder(holderPath)?.token === token) fs.rmSync(holderPath, { force: true });
      fs.rmSync(join(dataDir, LEASE_NAME), { recursive: true, force: true });
      void worker.terminate();
    },
  };
}

function readHolder(file: string): Holder | undefined {
  try {
    const h = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Holder>;
    return typeof h.host === "string" &&
      typeof h.pid === "number" &&
      typeof h.started === "string" &&
      typeof h.token === "string"
      ? (h as Holder)
      : undefined;
  } catch {
    return undefined;
  }
}

function describeHolder(h: Holder | undefined): string {
  return h === undefined
    ? "a server that left no holder file"
    : `example-conformance on host ${h.host}, process ${h.pid} in its PID namespace, started ${h.started}`;
}

function mtimeOf(path: string): number | undefined {
  try {
    return fs.statSync(path).mtimeMs;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** The problem a file-system error at the directory is, in words: for the lease and for the store that opens it. */
export function fileSystemProblem(dataDir: string, err: unknown): DataDirError {
  const e = err as NodeJS.ErrnoException;
  const what = e.code !== undefined && !e.message.startsWith(e.code) ? `${e.code}: ${e.message}` : e.message;
  if (e.code === "EACCES" || e.code === "EPERM") {
    const uid = process.getuid?.();
    return new DataDirError(
      "denied",
      `the data directory ${dataDir} cannot be used by this user${uid === undefined ? "" : ` (uid ${uid})`}: ` +
        `${what}; give this user read and write access to the directory and everything in it (chown -R or chmod), ` +
        `or run serve as their owner`,
      { cause: err },
    );
  }
  if (e.code === "ENOSPC" || e.code === "EDQUOT") {
    return new DataDirError(
      "io",
      `the disk of the data directory ${dataDir} is full: ${what}; free space on it and start serve again`,
      { cause: err },
    );
  }
  if (e.code === "ENOTDIR" || e.code === "EEXIST") {
    return new DataDirError(
      "damaged",
      `the data directory ${dataDir} is not a directory: ${what}; give --data-dir a directory`,
      { cause: err },
    );
  }
  return new DataDirError("io", `the data directory ${dataDir} cannot be used: ${what}`, { cause: err });
}

/** One lease thread's state: where the lease is, who this server is, and whether it holds or lost the lease. */
interface LeaseRun {
  dataDir: string;
  cells: BigInt64Array;
  leasePath: string;
  holderPath: string;
  me: Holder;
  /** The lease was taken: from now on a renewal past its lapse loses it. */
  acquired: boolean;
  tell: (m: FromLeaseThread) => void;
}

const isLost = (run: LeaseRun) => Atomics.load(run.cells, LOST) !== 0n;

function loseLease(run: LeaseRun, message: string): void {
  if (isLost(run)) return;
  Atomics.store(run.cells, LOST, 1n);
  run.tell({ type: "lost", message });
}

/** The lease's thread: takes the lease, renews it until told to give it back or until it is lost. */
async function runLeaseThread({ leaseFor: dataDir, cells }: LeaseThreadData): Promise<void> {
  const run: LeaseRun = {
    dataDir,
    cells,
    leasePath: join(dataDir, LEASE_NAME),
    holderPath: join(dataDir, HOLDER_NAME),
    me: { host: hostname(), pid: process.pid, started: new Date().toISOString(), token: randomUUID() },
    acquired: false,
    tell: (m) => parentPort?.postMessage(m),
  };
  const holds = (): boolean => readHolder(run.holderPath)?.token === run.me.token;
  let release: (() => Promise<void>) | undefined;
  try {
    release = await lockLease(run);
    await claimLease(run);
  } catch (err) {
    if (release !== undefined && !isLost(run) && holds()) fs.rmSync(run.holderPath, { force: true });
    await release?.().catch(() => undefined);
    const e = err instanceof DataDirError ? err : fileSystemProblem(dataDir, err);
    // The thread ends once the message is out: nothing else keeps it.
    run.tell({ type: "refused", problem: e.problem, message: e.message });
    return;
  }
  run.tell({ type: "held", token: run.me.token });
  parentPort?.once("message", () => {
    void (async () => {
      if (!isLost(run)) {
        if (holds()) fs.rmSync(run.holderPath, { force: true });
        await release?.().catch(() => undefined);
      }
      run.tell({ type: "released" });
    })();
  });
}

/** Takes the lease from proper-lockfile, waiting out a lapsing one; three times taken by others is "in-use". */
async function lockLease(run: LeaseRun): Promise<() => Promise<void>> {
  const { dataDir, leasePath, holderPath, me } = run;
  const onCompromised = (err: Error) => {
    const by = readHolder(holderPath);
    const taken = by !== undefined && by.token !== me.token;
    loseLease(
      run,
      `the data directory ${dataDir}: this server's lease ` +
        `${taken ? `was taken over by ${describeHolder(by)}` : `could not be renewed (${err.message})`}; stopping ` +
        `without another write`,
    );
  };
  const options: LeaseOptions = { notice: (line) => run.tell({ type: "notice", line }) };
  for (let attempt = 0; ; attempt++) {
    try {
      const release = await lockfile.lock(dataDir, {
        lockfilePath: leasePath,
        stale: LEASE_STALE_MS,
        update: LEASE_RENEW_MS,
        realpath: false,
        fs: leaseFileSystem(run),
        onCompromised,
      });
      run.acquired = true;
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ELOCKED") throw fileSystemProblem(dataDir, err);
      if (attempt === 2)
        throw new DataDirError(
          "in-use",
          `the data directory ${dataDir} is in use: other servers kept taking its lease; give each server its ` +
            `own --data-dir, or share a PostgreSQL server (--store postgres://...)`,
        );
      await waitForLapse(dataDir, leasePath, holderPath, options);
    }
  }
}

/**
 * Writes this server as the holder, and backs out (throwing "in-use") when another took the lease at the same moment.
 */
async function claimLease(run: LeaseRun): Promise<void> {
  const { dataDir, holderPath, me } = run;
  try {
    const tmp = `${holderPath}.${me.token}`;
    fs.writeFileSync(tmp, `${JSON.stringify(me)}\n`);
    fs.renameSync(tmp, holderPath);
  } catch (err) {
    throw fileSystemProblem(dataDir, err);
  }
  await sleep(SETTLE_MS);
  const holder = readHolder(holderPath);
  if (holder?.token !== me.token) {
    // Back out without removing the lease: it is the winner's.
    Atomics.store(run.cells, LOST, 1n);
    throw new DataDirError(
      "in-use",
      `the data directory ${dataDir} is in use by ${describeHolder(holder)}, which took its lease at the same ` +
        `moment; give each server its own --data-dir, or share a PostgreSQL server (--store postgres://...)`,
    );
  }
  retireOldLock(dataDir, { notice: (line) => run.tell({ type: "notice", line }) });
}

/** proper-lockfile's file system, so that a lapsed lease is never renewed and a lost one never removed. */
function leaseFileSystem(run: LeaseRun): typeof fs {
  return {
    ...fs,
    utimes(path: string, atime: Date, mtime: Date, callback: (err: NodeJS.ErrnoException | null) => void) {
      if (run.acquired && lapsed(run.cells)) {
        loseLease(run, lapsedMessage(run.dataDir, run.cells));
        return callback(Object.assign(new Error("the lease is lost"), { code: "ECOMPROMISED" }));
      }
      fs.utimes(path, atime, mtime, (err) => {
        if (err === null) Atomics.store(run.cells, RENEWED, BigInt(mtime.getTime()));
        callback(err);
      });
    },
    rmdir(path: string, callback: (err: NodeJS.ErrnoException | null) => void) {
      if (isLost(run)) return callback(null);
      fs.rmdir(path, callback);
    },
    rmdirSync(path: string) {
      if (!isLost(run)) fs.rmdirSync(path);
    },
  } as typeof fs;
}

/**
 * Watches a lease someone holds until it lapses (then returns, to take it) or moves (then throws "in-use": its
 * holder renews it). Says once on stderr that it waits, when the lease has not moved for two renewals.
 */
async function waitForLapse(
  dataDir: string,
  leasePath: string,
  holderPath: string,
  options: LeaseOptions,
): Promise<void> {
  const seen = mtimeOf(leasePath);
  if (seen === undefined) return;
  const holder = readHolder(holderPath);
  const started = Date.now();
  let told = false;
  // Bounded: a lease that neither moves nor lapses within this is left to proper-lockfile's own test of staleness.
  while (Date.now() - started < LEASE_STALE_MS + 5 * WATCH_MS) {
    await sleep(WATCH_MS);
    const now = mtimeOf(leasePath);
    if (now === undefined) return;
    if (now !== seen) {
      throw new DataDirError(
        "in-use",
        `the data directory ${dataDir} is in use by ${describeHolder(readHolder(holderPath) ?? holder)}, which ` +
          `renews its lease; give each server its own --data-dir, or share a PostgreSQL server (--store ` +
          `postgres://...)`,
      );
    }
    const age = Date.now() - now;
    if (age > LEASE_STALE_MS) return;
    if (!told && Date.now() - started >= 2 * LEASE_RENEW_MS + WATCH_MS) {
      told = true;
      options.notice(
        `the data directory ${dataDir} is leased by ${describeHolder(holder)}, which has not renewed it for ` +
          `${seconds(age)}: waiting up to ${seconds(LEASE_STALE_MS - age)} for the lease to lapse (a running ` +
          `server renews it every ${seconds(LEASE_RENEW_MS)}), then taking it over`,
      );
    }
  }
}

/**
 * Versions before the lease kept a bare PID in example-conformance.lock and trusted it. One that names a process
 * running in this PID namespace (other than this one: in a container both are process 1) may be an older server
 * still at work, which honours no lease: refuse. Any other is a leftover: remove it, and say so.
 */
function retireOldLock(dataDir: string, options: LeaseOptions): void {
  const file = join(dataDir, OLD_LOCK_NAME);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "EISDIR") return;
    throw fileSystemProblem(dataDir, err);
  }
  const pid = Number(text.trim());
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && running(pid)) {
    throw new DataDirError(
      "in-use",
      `the data directory ${dataDir} holds an older example-conformance's lock (${file}) naming process ${pid}, ` +
        `which is running here: stop that server first, or delete the file if process ${pid} is not one`,
    );
  }
  fs.rmSync(file, { force: true });
  options.notice(
    `removed ${file}, an older version's lock naming process ${text.trim().slice(0, 20) || "(none)"}, which is ` +
      `not running in this PID namespace (the data directory is leased now)`,
  );
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

if (!isMainThread && typeof (workerData as Partial<LeaseThreadData> | null)?.leaseFor === "string")
  void runLeaseThread(workerData as LeaseThreadData);
