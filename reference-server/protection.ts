// What keeps one client from starving the others, shared by both interfaces: connection caps, a bound on calls in
// flight, and a memory watermark past which new work is shed instead of accepted.
import { readFileSync } from "node:fs";
import type net from "node:net";
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export interface ProtectionLimits {
  /** Connections one interface holds at once; past it a new connection is closed at once. */
  maxConnections: number;
  /** Connections from one client address; past it that address's new connections are closed at once. */
  maxConnectionsPerAddress: number;
  /** Calls (gRPC) or requests (HTTP) being served at once; past it new ones are shed (RESOURCE_EXHAUSTED / 503). */
  maxInFlight: number;
  /** Bytes of JS heap and external memory past which new calls and requests are shed until it falls again. */
  memoryWatermarkBytes: number;
}

/** Descriptors kept back for files, DNS, logs and the listening sockets themselves. */
const RESERVED_DESCRIPTORS = 64;

/** The process's open-file limit, from /proc on Linux; undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    const n = Number(soft);
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Defaults for one interface. Both interfaces share the process's descriptors, so each may hold at most half of
 * what the open-file limit leaves: a flood on one is refused before the other runs out.
 */
export function defaultLimits(fileLimit = openFileLimit()): ProtectionLimits {
  const share = fileLimit === undefined ? 1000 : Math.max(16, Math.floor((fileLimit - RESERVED_DESCRIPTORS) / 2));
  const maxConnections = Math.min(1000, share);
  return {
    maxConnections,
    maxConnectionsPerAddress: Math.min(256, maxConnections),
    maxInFlight: 10_000,
    memoryWatermarkBytes: 768 * 1024 * 1024,
  };
}

/** Every limit a positive whole number, or a RangeError naming the first that is not: for any table of limits. */
export function validateLimits<T extends object>(limits: T): T {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return limits;
}

/**
 * Caps the connections a server accepts, in total and per client address. Refused sockets are destroyed before
 * any protocol runs on them, so they cost a descriptor for an instant and no memory. Returns the open sockets, so
 * a shutdown can destroy what is left after its grace.
 */
export function capConnections(
  server: net.Server,
  limits: Pick<ProtectionLimits, "maxConnections" | "maxConnectionsPerAddress">,
  onRefuse?: (reason: string) => void,
): Set<net.Socket> {
  const open = new Set<net.Socket>();
  const perAddress = new Map<string, number>();
  server.on("connection", (socket: net.Socket) => {
    const address = socket.remoteAddress ?? "";
    const fromAddress = perAddress.get(address) ?? 0;
    if (open.size >= limits.maxConnections || fromAddress >= limits.maxConnectionsPerAddress) {
      onRefuse?.(open.size >= limits.maxConnections ? "connection limit" : "per-address connection limit");
      socket.on("error", () => undefined);
      socket.destroy();
      return;
    }
    open.add(socket);
    perAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      open.delete(socket);
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  return open;
}

/** How often memory is sampled: a flood is seen within this, and no request pays for the reading. */
const MEMORY_SAMPLE_MS = 100;

export interface Shedder {
  /** Why new work should be refused now, or undefined to accept it. Counts it in flight when accepted. */
  admit(): string | undefined;
  /** Ends one admitted call or request. */
  done(): void;
  inFlight(): number;
  stop(): void;
}

/** While memory reads past a watermark, a full collection at most this often (see sampleMemory). */
const COLLECT_EVERY_MS = 1000;

/**
 * One reading of the process's memory for every shedder in it: both interfaces share the process, so one sampler
 * serves them all, and it runs only while some shedder is open. `watermarks` holds each open shedder's.
 */
const memory = {
  bytes: 0,
  watermarks: [] as number[],
  collectedAt: -Infinity,
  timer: undefined as NodeJS.Timeout | undefined,
};

/**
 * Heap used and external memory count garbage until a collection, and V8 collects when JavaScript allocates: after
 * an attack whose buffers were all let go, a server past its watermark sheds every call, so it allocates almost
 * nothing, nothing collects, and the garbage kept it shedding (once for 19 minutes). RSS keeps the garbage as well,
 * and v8.getHeapStatistics cannot tell it from what is live; only a collection can. So, past the lowest watermark,
 * the reading is taken again after full collections, at most once a second: 20-50 ms of pause on the reference's
 * small heap with 300 MiB of buffers let go (the buffers are external: freed, not traced), and nothing at all below
 * the watermark.
 */
function sampleMemory(): void {
  memory.bytes = memoryInUse();
  const now = performance.now();
  if (memory.bytes <= Math.min(...memory.watermarks) || now - memory.collectedAt < COLLECT_EVERY_MS) return;
  memory.collectedAt = now;
  collectGarbage();
  memory.bytes = memoryInUse();
}

/**
 * Heap used and external memory: process.memoryUsage's heapUsed and external, read from the same V8 statistics
 * without the resident set size it also reads from /proc on every call (the sampler runs every 100 ms in every
 * process that serves, a local `check` included).
 */
function memoryInUse(): number {
  const h = getHeapStatistics();
  return h.used_heap_size + h.external_memory;
}

/** V8's full collection once found; null once it was found not to be had, so it is looked for once. */
let gc: (() => void) | null | undefined;

/**
 * Full, synchronous collections: two, as V8 brings its count of external memory (what memoryInUse reads)
 * up to date only in the collection after the one that freed the buffers (seen on node 20: external stayed at
 * 130 MiB after one collection and a wait, 2 MiB after two). False when there is no way to collect.
 */
function collectGarbage(): boolean {
  gc ??= findGc();
  if (gc === null) return false;
  gc();
  gc();
  return true;
}

/**
 * V8's gc: node's own when it was started with --expose-gc (NODE_OPTIONS=--expose-gc is allowed); otherwise one
 * given to a new context alone, the flag set for as long as that takes and unset at once, so that no other context
 * gets a gc (the flag never reaches the main context once it has started: nodejs/node#16595). There is no supported
 * way to collect from JavaScript after start-up: Node documents v8.setFlagsFromString after start-up as unpredictable,
 * "or it may simply do nothing", and `serve` cannot put a flag on its own command line (the bin's `#!/usr/bin/env
 * node` takes none portably; a re-exec would be a second process for npm's signal handling to reach). So it is tried
 * once, and a refusal (a throw) or a flag ignored (the context has no gc) leaves the watermark reading memory as it
 * is, garbage included, rather than failing every sample: an attack's garbage can then keep new work shed until V8
 * collects on its own, and starting the server with NODE_OPTIONS=--expose-gc gives the collection back.
 */
function findGc(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === "function") return exposed as () => void;
  try {
    setFlagsFromString("--expose-gc");
    const found: unknown = runInNewContext("gc");
    return typeof found === "function" ? (found as () => void) : null;
  } catch {
    return null;
  } finally {
    try {
      setFlagsFromString("--no-expose-gc");
    } catch {
      // Refused as the first one was: nothing was set.
    }
  }
}

function watchMemory(watermark: number): () => void {
  memory.watermarks.push(watermark);
  if (memory.watermarks.length === 1) {
    sampleMemory();
    memory.timer = setInterval(sampleMemory, MEMORY_SAMPLE_MS);
    memory.timer.unref();
  }
  let watching = true;
  return () => {
    if (!watching) return;
    watching = false;
    memory.watermarks.splice(memory.watermarks.indexOf(watermark), 1);
    if (memory.watermarks.length === 0) clearInterval(memory.timer);
  };
}

/** Admission for one interface: at most maxInFlight at once, and nothing new while memory is past the watermark. */
export function createShedder(limits: Pick<ProtectionLimits, "maxInFlight" | "memoryWatermarkBytes">): Shedder {
  let inFlight = 0;
  const unwatch = watchMemory(limits.memoryWatermarkBytes);
  return {
    admit() {
      if (inFlight >= limits.maxInFlight) return `the server is at its limit of ${limits.maxInFlight} calls in flight`;
      if (memory.bytes > limits.memoryWatermarkBytes) return "the server is short of memory";
      inFlight++;
      return undefined;
    },
    done() {
      if (inFlight > 0) inFlight--;
    },
    inFlight: () => inFlight,
    stop: unwatch,
  };
}
