// Starts the whole reference server, gRPC and HTTP, for the CLI's `serve` and `check` and for tests.
import { startGrpcServer, type GrpcServerOptions } from "./grpc.js";
import { startHttpServer, type HttpServerOptions } from "./http/server.js";
import { openStore } from "./http/open-store.js";
import type { StoreLimits } from "./http/store.js";
import type { ProtectionLimits } from "./protection.js";
import { createOwedLedger, type OwedLimits } from "./owed.js";
import { createLogger, type Logger } from "./logger.js";

export interface ReferenceServerOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  grpcPort?: number;
  httpPort?: number;
  /** When set, every HTTP data request needs it in X-API-Key. */
  apiKey?: string;
  tls?: { certFile: string; keyFile: string };
  /** How much to log: default silent, so a program that starts the server hears nothing unless it asks. */
  log?: GrpcServerOptions["log"];
  /** A pino logger of the caller's; with it, lines go there at its level (keys still redacted). */
  logger?: Logger;
  maxReceiveMessageBytes?: number;
  /** Each interface's connections, calls in flight and the shared memory watermark (see protection.ts). */
  protection?: Partial<ProtectionLimits>;
  /** Reply bytes owed to clients that do not read (see owed.ts): per connection, in all, and how long one may stall. */
  owed?: Partial<OwedLimits>;
  /** Largest header block on either interface: gRPC refuses it RESOURCE_EXHAUSTED, HTTP answers 431. Default 16 KiB. */
  maxHeaderListBytes?: number;
  /** Concurrent streams per gRPC connection, advertised in SETTINGS; default 100 (SERVER_CHANNEL_OPTIONS). */
  maxConcurrentStreams?: number;
  /**
   * Where the HTTP interface keeps messages: memory: (the default), pglite:DIR, or postgres://... (see open-store.ts).
   */
  store?: string;
  /** Bounds of the message store; past them a create is answered 507. */
  storeLimits?: StoreLimits;
  /**
   * How long in-flight calls and requests may run after close() before their connections are destroyed; default 5 s.
   */
  shutdownGraceMs?: number;
}

export interface ReferenceServer {
  /** host:port of the gRPC server. */
  grpcAddress: string;
  /** http://host:port of the HTTP server. */
  httpUrl: string;
  close(): Promise<void>;
}

const STORE_PING_MS = 1000;

/** The gRPC port's options, from the reference's. */
function grpcOptionsOf(
  options: ReferenceServerOptions,
  host: string,
  logger: NonNullable<GrpcServerOptions["logger"]>,
  ledger: NonNullable<GrpcServerOptions["ledger"]>,
): GrpcServerOptions {
  return {
    host,
    port: options.grpcPort ?? 50051,
    ...(options.tls && { tls: options.tls }),
    logger,
    ledger,
    ...(options.maxReceiveMessageBytes !== undefined && { maxReceiveMessageBytes: options.maxReceiveMessageBytes }),
    ...(options.protection !== undefined && { protection: options.protection }),
    ...(options.maxHeaderListBytes !== undefined && { maxHeaderListBytes: options.maxHeaderListBytes }),
    ...(options.maxConcurrentStreams !== undefined && {
      limits: { "grpc.max_concurrent_streams": options.maxConcurrentStreams },
    }),
    ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
  };
}

/** The HTTP port's options, from the reference's. */
function httpOptionsOf(
  options: ReferenceServerOptions,
  host: string,
  logger: NonNullable<HttpServerOptions["logger"]>,
  ledger: NonNullable<HttpServerOptions["ledger"]>,
  store: NonNullable<HttpServerOptions["store"]>,
): HttpServerOptions {
  return {
    host,
    port: options.httpPort ?? 8080,
    ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
    logger,
    ledger,
    ...(options.protection !== undefined && { protection: options.protection }),
    ...(options.maxHeaderListBytes !== undefined && { maxHeaderBytes: options.maxHeaderListBytes }),
    store,
    // Hello over Connect and gRPC-Web on the HTTP port has the gRPC port's message limit.
    ...(options.maxReceiveMessageBytes !== undefined && { maxMessageBytes: options.maxReceiveMessageBytes }),
    ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
  };
}

export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const host = options.host ?? "127.0.0.1";
  // One logger for both interfaces, quiet unless the caller asked for lines.
  // What both interfaces owe their clients, from one memory.
  const ledger = createOwedLedger(options.owed);
  const logger = createLogger(
    {
      ...(options.log !== undefined && { log: options.log }),
      ...(options.logger !== undefined && { logger: options.logger }),
    },
    "silent",
  );
  // The store first: a database that cannot be reached fails the start before any port is bound.
  const store = await openStore(options.store ?? "memory:", {
    ...(options.storeLimits !== undefined && { limits: options.storeLimits }),
  });
  let grpc;
  try {
    grpc = await startGrpcServer(grpcOptionsOf(options, host, logger, ledger));
  } catch (err) {
    await store.close();
    throw err;
  }
  let http;
  try {
    http = await startHttpServer(httpOptionsOf(options, host, logger, ledger, store));
  } catch (err) {
    await grpc.close();
    await store.close();
    throw err;
  }
  // Health follows the store: NOT_SERVING while it cannot be reached, SERVING again when it can.
  const watch = setInterval(() => {
    void store.ping().then((up) => grpc.setServing(up));
  }, STORE_PING_MS);
  watch.unref();
  return {
    grpcAddress: grpc.address,
    httpUrl: http.url,
    async close() {
      clearInterval(watch);
      await Promise.all([grpc.close(), http.close()]);
      await store.close();
    },
  };
}
