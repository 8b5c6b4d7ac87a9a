// A report file opened before the run starts, so a path that cannot be written is refused before any call; its
// one write at the end is bounded in time. Every failure is a usage error naming the flag and the cause.
import { constants } from "node:fs";
import { mkdir, open, stat, unlink, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { ConformanceError } from "../../errors.js";

/** Bound on writing one report: a path that blocks (a pipe nobody reads, a hung mount) does not hold the run. */
export const REPORT_WRITE_TIMEOUT_MS = 30_000;

/** Where a reporter writes its one document: a report file, or stdout. */
export interface ReportSink {
  /** Replaces what was written with this text. */
  write(text: string): Promise<void> | void;
}

export interface ReportFile extends ReportSink {
  /** The flag that named it, for messages: --report-json, say, or --reporter json= (the path follows the =). */
  readonly flag: string;
  readonly path: string;
  /** Replaces the file's content with this text; rejects with a usage error naming the flag. */
  write(text: string): Promise<void>;
  close(): Promise<void>;
}

const cause = (err: unknown): string => {
  const e = err as NodeJS.ErrnoException;
  const known: Record<string, string> = {
    EACCES: "permission denied",
    EPERM: "permission denied",
    EISDIR: "it is a directory",
    ENOTDIR: "a part of the path is not a directory",
    EROFS: "read-only file system",
    ENOSPC: "no space left on the device",
    ENXIO: "a pipe or device with nothing reading it",
    ENOENT: "no such directory",
    ENOPROGRESS: e.message,
  };
  return e.code !== undefined ? `${known[e.code] ?? e.message} (${e.code})` : String(err);
};

/** The flag and path as the user wrote them: `--report-json out.json`, `--reporter json=out.json`. */
const named = (flag: string, path: string): string => (flag.endsWith("=") ? `${flag}${path}` : `${flag} ${path}`);

function bounded<T>(
  what: (signal: AbortSignal) => Promise<T>,
  flag: string,
  path: string,
  timeoutMs: number,
): Promise<T> {
  const stop = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      stop.abort();
      reject(
        new ConformanceError("usage", `${named(flag, path)}: cannot write: no answer within ${timeoutMs / 1000} s`),
      );
    }, timeoutMs);
    timer.unref();
  });
  return Promise.race([what(stop.signal), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Writes every byte: a pipe opened O_NONBLOCK takes a part of a long report per write, or none while its reader is
 * behind (EAGAIN), so the rest is written as it drains, until the bound stops it.
 */
async function writeAll(
  handle: FileHandle,
  bytes: Buffer,
  position: number | null,
  signal: AbortSignal,
): Promise<void> {
  let done = 0;
  while (done < bytes.length && !signal.aborted) {
    try {
      const { bytesWritten } = await handle.write(
        bytes,
        done,
        bytes.length - done,
        position === null ? null : position + done,
      );
      // A file that takes nothing and says no error (some /proc and /sys entries past their first write) would be
      // asked again at once, forever, at full CPU: it is refused as it is.
      if (bytesWritten === 0)
        throw Object.assign(new Error(`it took ${done} of ${bytes.length} bytes and then none`), {
          code: "ENOPROGRESS",
        });
      done += bytesWritten;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/**
 * A report's own folder is made when it is missing and its parent exists (`--report-json reports/run.json` in a
 * fresh checkout), as docs/checking-a-server.md says; a path missing more than that is more likely a typo than a wish,
 * and is refused naming the folder, instead of a tree of folders made silently.
 */
async function makeOwnFolder(flag: string, path: string): Promise<void> {
  const folder = dirname(path);
  const exists = (p: string) =>
    stat(p).then(
      () => true,
      () => false,
    );
  if (await exists(folder)) return;
  if (!(await exists(dirname(folder)))) {
    throw new ConformanceError(
      "usage",
      `${named(flag, path)}: cannot write: neither its folder ${folder} nor that folder's parent exists (a ` +
        `report makes at most its own folder: create the rest first)`,
    );
  }
  await mkdir(folder).catch((err: NodeJS.ErrnoException) => {
    // Another report of the same run made it first.
    if (err.code !== "EEXIST") throw err;
  });
}

/**
 * Opens (creating, never truncating yet) the file a report goes to. O_NONBLOCK: a named pipe with no reader is
 * refused at once instead of blocking the open forever; regular files are unaffected.
 */
export async function openReportFile(
  flag: string,
  path: string,
  timeoutMs: number = REPORT_WRITE_TIMEOUT_MS,
): Promise<ReportFile> {
  let handle: FileHandle;
  let regular: boolean;
  // A file this run creates and then never writes (the target was unreachable) is removed again on close, so no
  // empty report is left for a pipeline to pick up.
  const existed = await stat(path).then(
    () => true,
    () => false,
  );
  let wrote = false;
  try {
    handle = await bounded(
      async () => {
        await makeOwnFolder(flag, path);
        return open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK, 0o666);
      },
      flag,
      path,
      timeoutMs,
    );
    regular = (await handle.stat()).isFile();
  } catch (err) {
    if (err instanceof ConformanceError) throw err;
    throw new ConformanceError("usage", `${named(flag, path)}: cannot write: ${cause(err)}`);
  }
  return {
    flag,
    path,
    async write(text) {
      try {
        await bounded(
          async (signal) => {
            if (regular) await handle.truncate(0);
            await writeAll(handle, Buffer.from(text, "utf8"), regular ? 0 : null, signal);
            wrote = !signal.aborted;
          },
          flag,
          path,
          timeoutMs,
        );
      } catch (err) {
        if (err instanceof ConformanceError) throw err;
        throw new ConformanceError("usage", `${named(flag, path)}: cannot write: ${cause(err)}`);
      }
    },
    async close() {
      await handle.close().catch(() => undefined);
      if (!wrote && !existed && regular) await unlink(path).catch(() => undefined);
    },
  };
}
