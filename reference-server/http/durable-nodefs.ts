// The embedded engine's file layer made durable: PostgreSQL's own fsync calls reach the disk, so a write is on disk
// before its 201, as PostgreSQL promises it (commit flushes the WAL; a checkpoint syncs the data files it wrote).
//
// What PGlite 0.5 does, read in its sources (dist/chunk-XZUEO4BZ.js, dist/fs/nodefs.js) and seen with strace:
// - it starts PostgreSQL with -F (fsync off), so PostgreSQL never asks for a sync;
// - emscripten's NODEFS, its node:fs mount, has no fsync of its own: fsync() reaches `stream_ops.fsync?.()`, which is
//   undefined there, and fdatasync() is a no-op that never reaches the stream at all.
// So: PostgreSQL's start parameters without -F and with wal_sync_method=fsync (fdatasync would be lost), and NODEFS
// given an fsync that calls node:fs's. A sync that fails is PostgreSQL's to judge (it stops rather than go on past
// a write the disk refused), as on any other file system.
import fs from "node:fs";
import { join } from "node:path";
import { NodeFS } from "@electric-sql/pglite/nodefs";

/** PGlite's own start parameters (PGlite.defaultStartParams), less -F, with the WAL flushed by fsync. */
export function durableStartParams(defaults: readonly string[]): string[] {
  const params = defaults.filter((p) => p !== "-F");
  return [...params, "-c", "fsync=on", "-c", "wal_sync_method=fsync", "-c", "synchronous_commit=on"];
}

/** Every file and directory below `dir`, and `dir` itself, synced to the disk (directories after what they hold). */
export function syncTree(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) syncTree(path);
    else if (entry.isFile()) syncPath(path);
  }
  syncPath(dir);
}

function syncPath(path: string): void {
  const fd = fs.openSync(path, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The parts of emscripten's module this reaches into, as its preRun hands it over. */
interface EmscriptenModule {
  FS: { ErrnoError: new (errno: number) => Error };
  NODEFS: { stream_ops: Record<string, unknown>; convertNodeCode(err: NodeJS.ErrnoException): number };
}

type InitOptions = Parameters<NodeFS["init"]>[1];

/** NODEFS with an fsync: a mount of `dataDir` on which PostgreSQL's syncs reach the disk. */
export class DurableNodeFS extends NodeFS {
  override async init(pg: Parameters<NodeFS["init"]>[0], options: InitOptions): ReturnType<NodeFS["init"]> {
    const { emscriptenOpts } = await super.init(pg, options);
    const preRun = (emscriptenOpts as { preRun?: ((module: EmscriptenModule) => void)[] }).preRun ?? [];
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...preRun, withFsync] } };
  }
}

/** NODEFS's streams get an fsync that syncs the file (or directory) behind the stream's descriptor. */
function withFsync(module: EmscriptenModule): void {
  const { FS, NODEFS } = module;
  NODEFS.stream_ops.fsync = (stream: { nfd?: number }) => {
    if (stream.nfd === undefined) return 0;
    try {
      // Looked up at each call (not bound once): node:fs as the process has it now.
      fs.fsyncSync(stream.nfd);
      return 0;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      // A descriptor that cannot be synced (a pipe, say) has nothing to flush: as Linux's fsync on one, no failure.
      if (e.code === "EINVAL" || e.code === "EROFS") return 0;
      if (!e.code) throw err;
      throw new FS.ErrnoError(NODEFS.convertNodeCode(e));
    }
  };
}
