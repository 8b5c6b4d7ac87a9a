// `serve`: runs the reference server until SIGTERM, SIGINT or SIGHUP, or until the npx that started it ends; the
// first two lines name the bound addresses.
import cluster from "node:cluster";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { Command } from "commander";
import { ConformanceError } from "../errors.js";
import type { CliIo } from "./io.js";
import { durationSpec, integerSpec, shared, toOptions, type OptionSpec, type OptionTable } from "./option-table.js";
import { DEFAULT_OWED_LIMITS } from "../../reference-server/owed.js";
import type { DataDirProblem } from "../../reference-server/http/store.js";
import type { ReferenceServer, ReferenceServerOptions } from "../../reference-server/start.js";
import { runWorkers, type WorkerListening } from "./serve-workers.js";
import { npmWrappers, onWrapperGone, type Wrapper } from "./wrapper-watch.js";

interface ServeOptions {
  host: string;
  grpcPort: number;
  httpPort: number;
  apiKey?: string;
  tlsCert?: string;
  tlsKey?: string;
  maxMessageBytes?: number;
  logLevel: "silent" | "info" | "debug";
  maxConnections?: number;
  maxConnectionsPerAddress?: number;
  maxInFlight?: number;
  memoryWatermarkMib?: number;
  maxHeaderBytes?: number;
  maxStreams?: number;
  storeMaxMessages?: number;
  storeMaxBytes?: number;
  storeMinFreeMib?: number;
  unreadMibPerConnection?: number;
  unreadMib?: number;
  unreadTimeout: number;
  requestTimeout: number;
  shutdownGrace: number;
  store?: string;
  dataDir?: string;
  workers: number;
}

/**
 * Where `serve` keeps messages when neither --store nor --data-dir is given: durable, in the user's data folder
 * (XDG_DATA_HOME, else ~/.local/share; %LOCALAPPDATA% on Windows), never in whatever folder serve was started from.
 */
export function defaultDataDir(
  env: Readonly<Record<string, string | undefined>>,
  home: string = homedir(),
  platform: NodeJS.Platform = process.platform,
): string {
  // The XDG specification: a relative XDG_DATA_HOME is invalid and ignored.
  const xdg = env.XDG_DATA_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, "example-conformance");
  if (platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "example-conformance");
  return join(home, ".local", "share", "example-conformance");
}

/** Each a positive whole number; the defaults live in the server (reference-server/protection.ts, store.ts). */
const limit = (flags: string, description: string): OptionSpec<number> => integerSpec(flags, description, 1, 2 ** 40);

/** Every option of `serve`, in the order --help shows them. */
const SERVE_TABLE: OptionTable<ServeOptions> = {
  host: { flags: "--host <host>", description: "interface to bind", default: "127.0.0.1" },
  grpcPort: shared.grpcPort("gRPC port (0 picks a free one)", 0, 50051),
  httpPort: shared.httpPort("HTTP port (0 picks a free one)", 0, 8080),
  apiKey: shared.apiKey("require this key in X-API-Key on HTTP data requests (or EXAMPLE_API_KEY)"),
  tlsCert: { flags: "--tls-cert <file>", description: "TLS certificate (PEM) for gRPC" },
  tlsKey: { flags: "--tls-key <file>", description: "TLS key (PEM) for gRPC" },
  maxMessageBytes: integerSpec("--max-message-bytes <n>", "gRPC receive limit (default 4 MiB)", 1, 1 << 30),
  logLevel: {
    flags: "--log-level <level>",
    description: "silent, info or debug (one line per request)",
    default: "info",
  },
  store: {
    flags: "--store <url>",
    description:
      "where messages are kept: pglite:DIR (embedded PostgreSQL, durable; the default, in --data-dir), " +
      "postgres://USER@HOST:PORT/DB (shared by replicas; password from PGPASSWORD or the URL), or memory:",
  },
  dataDir: {
    flags: "--data-dir <dir>",
    description:
      "the embedded store's directory (default $XDG_DATA_HOME/example-conformance, else " +
      "~/.local/share/example-conformance; said on stderr at start)",
  },
  workers: integerSpec(
    "--workers <n>",
    "serve from this many processes sharing the ports (node:cluster); more than 1 needs a store they can share " +
      "(--store postgres://...)",
    1,
    256,
    1,
  ),
  shutdownGrace: durationSpec(
    "--shutdown-grace <duration>",
    "how long calls in flight may finish after SIGTERM before connections are cut: 500ms, 5s, 1m",
    5000,
    "5s",
  ),
  maxConnections: limit(
    "--max-connections <n>",
    "connections each interface holds at once (default 1000, or half the open-file limit less 64 if lower)",
  ),
  maxConnectionsPerAddress: limit(
    "--max-connections-per-address <n>",
    "connections from one client address, per interface (default 256)",
  ),
  maxInFlight: limit(
    "--max-in-flight <n>",
    "calls (gRPC) or requests (HTTP) served at once; past it RESOURCE_EXHAUSTED with grpc-retry-pushback-ms, or " +
      "503 with Retry-After (default 10000)",
  ),
  memoryWatermarkMib: limit(
    "--memory-watermark-mib <n>",
    "heap and external memory past which new calls are shed until it falls (default 768)",
  ),
  maxHeaderBytes: limit(
    "--max-header-bytes <n>",
    "largest header block: a larger gRPC one is refused RESOURCE_EXHAUSTED (or its stream reset), a larger HTTP " +
      "one 431 (default 16384)",
  ),
  maxStreams: limit(
    "--max-streams <n>",
    "concurrent streams per gRPC connection, advertised in SETTINGS; a peer that opens more has them refused " +
      "(default 100)",
  ),
  unreadMibPerConnection: limit(
    "--unread-mib-per-connection <n>",
    "MiB of replies one connection may leave unread (and, on gRPC, of requests half-sent) before it gets no new " +
      "work until it reads (default 16)",
  ),
  unreadMib: limit(
    "--unread-mib <n>",
    "MiB of replies all clients together may leave unread (and, on gRPC, of requests half-sent); past it only " +
      "connections that owe nothing get new work, and no half-sent request grows (default 256)",
  ),
  unreadTimeout: durationSpec(
    "--unread-timeout <duration>",
    "a connection (HTTP/2: a stream) whose replies are left unread this long, none taken, or whose request stops " +
      "coming, is closed (reset): 500ms, 5s, 1m",
    DEFAULT_OWED_LIMITS.stallMs,
    `${DEFAULT_OWED_LIMITS.stallMs / 1000}s`,
  ),
  requestTimeout: durationSpec(
    "--request-timeout <duration>",
    "a request not whole this long after it began, however steadily it comes, is refused: HTTP 408 and the " +
      "connection closed, a gRPC stream reset (a streamed request: each message): 500ms, 30s, 1m",
    DEFAULT_OWED_LIMITS.arrivalMs,
    `${DEFAULT_OWED_LIMITS.arrivalMs / 1000}s`,
  ),
  storeMaxMessages: limit(
    "--store-max-messages <n>",
    "messages the store holds; past it POST is answered 507 (default 100000)",
  ),
  storeMaxBytes: limit(
    "--store-max-bytes <n>",
    "bytes of message bodies the store holds; past it POST and PUT are answered 507 (default 64 MiB)",
  ),
  storeMinFreeMib: integerSpec(
    "--store-min-free-mib <n>",
    "MiB the embedded store keeps free on its disk; a POST or PUT that would leave less is answered 507 (default " +
      "64; 0 leaves it to PostgreSQL)",
    0,
    2 ** 30,
  ),
};

/**
 * How `serve` ends when its embedded store's data directory cannot be used, or can no longer be (sysexits.h's
 * codes): another server holds it or took it over, 75 (EX_TEMPFAIL: start again once that one stops); it is
 * damaged, 65 (EX_DATAERR); this user may not use it, 77 (EX_NOPERM); its disk is full or failed, or the engine
 * stopped on it, 74 (EX_IOERR).
 */
export const DATA_DIR_EXIT_CODES: Readonly<Record<DataDirProblem, number>> = {
  "in-use": 75,
  lost: 75,
  damaged: 65,
  denied: 77,
  io: 74,
};

/** The usage rules of serve's options, and the store they name. */
function storeOf(opts: ServeOptions, env: CliIo["env"]): string {
  if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) {
    throw new ConformanceError("usage", "--tls-cert and --tls-key go together");
  }
  if (!["silent", "info", "debug"].includes(opts.logLevel)) {
    throw new ConformanceError("usage", `--log-level ${opts.logLevel}: expected silent, info or debug`);
  }
  if (opts.store !== undefined && opts.dataDir !== undefined) {
    throw new ConformanceError(
      "usage",
      "--data-dir is the embedded store's directory: give it or --store, not both (--store pglite:DIR names the " +
        "directory itself)",
    );
  }
  const store = opts.store ?? `pglite:${opts.dataDir ?? defaultDataDir(env)}`;
  // Each process has its own memory, and an embedded store admits one process: only a server is shared.
  if (opts.workers > 1 && !/^postgres(ql)?:\/\//.test(store)) {
    throw new ConformanceError(
      "usage",
      "--workers above 1 needs a store every worker shares: --store postgres://USER@HOST:PORT/DB",
    );
  }
  return store;
}

/** The reference server's options from serve's flags. */
function serverOptions(opts: ServeOptions, store: string, apiKey: string | undefined): ReferenceServerOptions {
  return {
    store,
    host: opts.host,
    grpcPort: opts.grpcPort,
    httpPort: opts.httpPort,
    ...(apiKey !== undefined && apiKey !== "" && { apiKey }),
    ...(opts.tlsCert !== undefined &&
      opts.tlsKey !== undefined && { tls: { certFile: opts.tlsCert, keyFile: opts.tlsKey } }),
    ...(opts.maxMessageBytes !== undefined && { maxReceiveMessageBytes: opts.maxMessageBytes }),
    log: opts.logLevel,
    protection: {
      ...(opts.maxConnections !== undefined && { maxConnections: opts.maxConnections }),
      ...(opts.maxConnectionsPerAddress !== undefined && { maxConnectionsPerAddress: opts.maxConnectionsPerAddress }),
      ...(opts.maxInFlight !== undefined && { maxInFlight: opts.maxInFlight }),
      ...(opts.memoryWatermarkMib !== undefined && { memoryWatermarkBytes: opts.memoryWatermarkMib * 1024 * 1024 }),
    },
    owed: {
      ...(opts.unreadMibPerConnection !== undefined && {
        perConnectionBytes: opts.unreadMibPerConnection * 1024 * 1024,
      }),
      ...(opts.unreadMib !== undefined && { totalBytes: opts.unreadMib * 1024 * 1024 }),
      stallMs: opts.unreadTimeout,
      arrivalMs: opts.requestTimeout,
    },
    ...(opts.maxHeaderBytes !== undefined && { maxHeaderListBytes: opts.maxHeaderBytes }),
    ...(opts.maxStreams !== undefined && { maxConcurrentStreams: opts.maxStreams }),
    storeLimits: {
      ...(opts.storeMaxMessages !== undefined && { maxMessages: opts.storeMaxMessages }),
      ...(opts.storeMaxBytes !== undefined && { maxBytes: opts.storeMaxBytes }),
      ...(opts.storeMinFreeMib !== undefined && { minFreeBytes: opts.storeMinFreeMib * 1024 * 1024 }),
    },
    shutdownGraceMs: opts.shutdownGrace,
  };
}

/** Starts the server; a data directory that cannot be used is said in one line and ends serve with its code. */
async function startServer(
  options: ReferenceServerOptions,
  io: CliIo,
  setExit: (code: number) => void,
): Promise<ReferenceServer | undefined> {
  const { startReferenceServer } = await import("../../reference-server/start.js");
  const { StoreUnavailableError, DataDirError } = await import("../../reference-server/http/store.js");
  const { embeddedStoreEvents } = await import("../../reference-server/http/embedded-store.js");
  embeddedStoreEvents.on("notice", (line) => io.stderr(`example-conformance: ${line}\n`));
  // The store refuses every request from now on; end at once, without closing it (a lost lease may be
  // another server's by now, and a clean shutdown would write into its directory).
  embeddedStoreEvents.on("lost", (err) => {
    io.stderr(`example-conformance: ${err.message}\n`);
    process.exit(DATA_DIR_EXIT_CODES[err.problem]);
  });
  const server = await startReferenceServer(options).catch((err: unknown) => {
    if (err instanceof DataDirError) return err;
    if (err instanceof StoreUnavailableError) throw new ConformanceError("unreachable", err.message);
    if (err instanceof RangeError) throw new ConformanceError("usage", err.message);
    throw err;
  });
  if (!(server instanceof DataDirError)) return server;
  io.stderr(`example-conformance: ${server.message}\n`);
  setExit(DATA_DIR_EXIT_CODES[server.problem]);
  return undefined;
}

/**
 * An error nothing handled leaves the server in a state nobody knows: say so loudly and exit non-zero rather than
 * serve on from it or die with a bare stack trace.
 */
function exitOnFatal(server: ReferenceServer, io: CliIo): void {
  const fatal = (err: unknown) => {
    io.stderr(
      `example-conformance: serve: fatal: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}; ` +
        `stopping\n`,
    );
    process.exitCode = 70;
    void server.close().finally(() => process.exit(70));
    setTimeout(() => process.exit(70), 1000).unref();
  };
  process.on("uncaughtException", fatal);
  process.on("unhandledRejection", fatal);
}

/** The signals that end serve: a CI runner's or `kill`'s SIGTERM, Ctrl-C's SIGINT, a closed terminal's SIGHUP. */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/**
 * Serves until SIGTERM, SIGINT or SIGHUP, or until the npx (npm) that started it ends, then lets calls in flight
 * finish; its ports and its data directory are free when it exits.
 */
function serveUntilStopped(
  server: ReferenceServer,
  io: CliIo,
  setExit: (code: number) => void,
  wrappers: readonly Wrapper[],
): Promise<void> {
  return new Promise<void>((resolve) => {
    // A worker's channel to the primary would keep it alive after its servers closed.
    const done = () => {
      if (cluster.isWorker) process.disconnect?.();
      resolve();
    };
    let unwatch: () => void = () => {};
    const stop = (why: string) => {
      for (const s of STOP_SIGNALS) process.off(s, stop);
      unwatch();
      io.stderr(`example-conformance: ${why}: finishing in-flight calls\n`);
      server.close().then(done, (err: unknown) => {
        io.stderr(`example-conformance: shutdown: ${String(err)}\n`);
        setExit(1);
        done();
      });
    };
    for (const s of STOP_SIGNALS) process.on(s, stop);
    // A worker ends with its primary, which watches for itself.
    if (!cluster.isWorker) unwatch = onWrapperGone(wrappers, () => stop("the npm (npx) that started serve ended"));
  });
}

export function addServeCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const command = program
    .command("serve")
    .description(
      "run the reference server (gRPC and HTTP) until SIGTERM, SIGINT or SIGHUP, or the end of the npx that " +
        "started it; prints `grpc HOST:PORT` and `http URL` first",
    );
  for (const o of toOptions(SERVE_TABLE)) command.addOption(o);
  command.action(async (opts: ServeOptions) => {
    // Found first: an npx killed while the server starts is then seen gone, not missed.
    const wrappers = cluster.isWorker ? [] : npmWrappers(io.env);
    const store = storeOf(opts, io.env);
    if (opts.workers > 1 && cluster.isPrimary) {
      setExit(await runWorkers(opts.workers, io, opts.shutdownGrace, wrappers));
      return;
    }
    const server = await startServer(serverOptions(opts, store, opts.apiKey ?? io.env.EXAMPLE_API_KEY), io, setExit);
    if (server === undefined) return;
    const { redactStoreUrl } = await import("../../reference-server/http/open-store.js");
    // Said whatever the log level when the directory is the default one: the user did not choose it.
    if (opts.logLevel !== "silent" || (opts.store === undefined && opts.dataDir === undefined)) {
      io.stderr(`example-conformance: messages are kept in ${redactStoreUrl(store)}\n`);
    }
    exitOnFatal(server, io);
    if (cluster.isWorker)
      process.send?.({ grpcAddress: server.grpcAddress, httpUrl: server.httpUrl } satisfies WorkerListening);
    else io.stdout(`grpc ${server.grpcAddress}\nhttp ${server.httpUrl}\n`);
    await serveUntilStopped(server, io, setExit, wrappers);
  });
}
