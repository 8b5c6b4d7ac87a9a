// Starts the whole reference server, gRPC and HTTP, for the CLI's `serve` and `check` and for tests.
import { startGrpcServer, type GrpcServerOptions } from "./grpc.js";
import { startHttpServer, type HttpServerOptions } from "./http/server.js";
import type { StoreLimits } from "./http/store.js";
import type { ProtectionLimits } from "./protection.js";

export interface ReferenceServerOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  grpcPort?: number;
  httpPort?: number;
  /** When set, every HTTP data request needs it in X-API-Key. */
  apiKey?: string;
  tls?: { certFile: string; keyFile: string };
  log?: GrpcServerOptions["log"];
  maxReceiveMessageBytes?: number;
  /** Each interface's connections, calls in flight and the shared memory watermark (see protection.ts). */
  protection?: Partial<ProtectionLimits>;
  /** Largest gRPC header block; default 16 KiB. (HTTP keeps Node's 16 KiB, answered 431.) */
  maxHeaderListBytes?: number;
  /** Bounds of the in-memory message store; past them a create is answered 507. */
  storeLimits?: StoreLimits;
  /** How long in-flight calls and requests may run after close() before their connections are destroyed; default 5 s. */
  shutdownGraceMs?: number;
}

export interface ReferenceServer {
  /** host:port of the gRPC server. */
  grpcAddress: string;
  /** http://host:port of the HTTP server. */
  httpUrl: string;
  close(): Promise<void>;
}

export async function startReferenceServer(options: ReferenceServerOptions = {}): Promise<ReferenceServer> {
  const host = options.host ?? "127.0.0.1";
  const grpcOptions: GrpcServerOptions = {
    host,
    port: options.grpcPort ?? 50051,
    ...(options.tls && { tls: options.tls }),
    ...(options.log !== undefined && { log: options.log }),
    ...(options.maxReceiveMessageBytes !== undefined && { maxReceiveMessageBytes: options.maxReceiveMessageBytes }),
    ...(options.protection !== undefined && { protection: options.protection }),
    ...(options.maxHeaderListBytes !== undefined && { maxHeaderListBytes: options.maxHeaderListBytes }),
    ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
  };
  const grpc = await startGrpcServer(grpcOptions);
  let http;
  try {
    const httpOptions: HttpServerOptions = {
      host,
      port: options.httpPort ?? 8080,
      ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
      ...(options.log !== undefined && { log: options.log }),
      ...(options.protection !== undefined && { protection: options.protection }),
      ...(options.storeLimits !== undefined && { storeLimits: options.storeLimits }),
      ...(options.shutdownGraceMs !== undefined && { shutdownGraceMs: options.shutdownGraceMs }),
    };
    http = await startHttpServer(httpOptions);
  } catch (err) {
    await grpc.close();
    throw err;
  }
  return {
    grpcAddress: grpc.address,
    httpUrl: http.url,
    async close() {
      await Promise.all([grpc.close(), http.close()]);
    },
  };
}
