// A fault-injection shim under node:fs, preloaded (node --import) into a server under test: it keeps beside the
// directory LOSE_UNSYNCED_ROOT a shadow (LOSE_UNSYNCED_SHADOW) that holds only what a machine that lost power would
// still hold. A file's bytes reach the shadow when the file is fsynced, and not before (only the ranges written since
// the last sync are copied: a WAL segment is 16 MiB); names (create by fsync,
// rename, unlink, mkdir, rmdir) follow at once, as a journalling file system keeps its metadata. After the process is
// killed, the test puts the shadow in place of the directory: every write that was not synced is lost.
// Plain JavaScript: it runs before anything is compiled, in the server's own process.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { dirname, join, relative, resolve } from "node:path";

const root = process.env.LOSE_UNSYNCED_ROOT && resolve(process.env.LOSE_UNSYNCED_ROOT);
const shadow = process.env.LOSE_UNSYNCED_SHADOW && resolve(process.env.LOSE_UNSYNCED_SHADOW);

if (root && shadow) {
  // What is on disk when the server starts is durable.
  fs.rmSync(shadow, { recursive: true, force: true });
  if (fs.existsSync(root)) fs.cpSync(root, shadow, { recursive: true });
  else fs.mkdirSync(shadow, { recursive: true });

  const real = { ...fs };
  /** The shadow path of a path under root, or undefined. */
  const inShadow = (path) => {
    const rel = relative(root, resolve(String(path)));
    return rel.startsWith("..") || rel === "" ? undefined : join(shadow, rel);
  };
  const paths = new Map();
  /** Per path under root: the byte ranges written and not yet synced, or "all" (a truncation, a write at no offset). */
  const dirty = new Map();
  const mark = (fd, range) => {
    const path = paths.get(fd);
    if (!path) return;
    const was = dirty.get(path) ?? [];
    dirty.set(path, range === "all" || was === "all" ? "all" : [...was, range]);
  };
  const quietly = (work) => {
    try {
      work();
    } catch {
      // The shadow follows the real directory: what failed there did not happen.
    }
  };

  fs.openSync = (path, ...rest) => {
    const fd = real.openSync(path, ...rest);
    if (inShadow(path)) paths.set(fd, resolve(String(path)));
    return fd;
  };
  fs.closeSync = (fd) => {
    paths.delete(fd);
    return real.closeSync(fd);
  };
  fs.writeSync = (fd, buffer, ...rest) => {
    const written = real.writeSync(fd, buffer, ...rest);
    // writeSync(fd, buffer, offset, length, position) as the engine's file layer calls it; any other form: all of it.
    const position = typeof rest[0] === "number" && rest.length >= 3 ? rest[2] : undefined;
    mark(fd, typeof position === "number" ? [position, written] : "all");
    return written;
  };
  fs.ftruncateSync = (fd, ...rest) => {
    real.ftruncateSync(fd, ...rest);
    mark(fd, "all");
  };
  const synced = (fd) => {
    const path = paths.get(fd);
    const to = path && inShadow(path);
    if (!to) return;
    if (real.fstatSync(fd).isDirectory()) return void real.mkdirSync(to, { recursive: true });
    const ranges = dirty.get(path) ?? [];
    dirty.delete(path);
    if (ranges === "all" || !real.existsSync(to)) {
      real.mkdirSync(dirname(to), { recursive: true });
      return void real.copyFileSync(path, to);
    }
    // Read through a descriptor of its own: the synced one may be open for writing only.
    const src = real.openSync(path, "r");
    const out = real.openSync(to, "r+");
    try {
      for (const [at, length] of ranges) {
        const bytes = Buffer.alloc(length);
        const n = real.readSync(src, bytes, 0, length, at);
        real.writeSync(out, bytes, 0, n, at);
      }
      real.ftruncateSync(out, real.fstatSync(src).size);
    } finally {
      real.closeSync(src);
      real.closeSync(out);
    }
  };
  fs.fsyncSync = (fd) => {
    real.fsyncSync(fd);
    synced(fd);
  };
  fs.fdatasyncSync = (fd) => {
    real.fdatasyncSync(fd);
    synced(fd);
  };
  fs.renameSync = (from, to) => {
    real.renameSync(from, to);
    const moved = dirty.get(resolve(String(from)));
    dirty.delete(resolve(String(from)));
    if (moved) dirty.set(resolve(String(to)), moved);
    const [a, b] = [inShadow(from), inShadow(to)];
    if (a && b && real.existsSync(a)) quietly(() => real.renameSync(a, b));
    else if (b) quietly(() => real.rmSync(b, { force: true }));
  };
  fs.unlinkSync = (path) => {
    real.unlinkSync(path);
    const s = inShadow(path);
    if (s) quietly(() => real.rmSync(s, { force: true }));
  };
  fs.mkdirSync = (path, ...rest) => {
    const made = real.mkdirSync(path, ...rest);
    const s = inShadow(path);
    if (s) quietly(() => real.mkdirSync(s, { recursive: true }));
    return made;
  };
  fs.rmdirSync = (path, ...rest) => {
    real.rmdirSync(path, ...rest);
    const s = inShadow(path);
    if (s) quietly(() => real.rmSync(s, { recursive: true, force: true }));
  };
  // ESM importers of node:fs (the engine's own file layer among them) see the same functions.
  syncBuiltinESMExports();
}
