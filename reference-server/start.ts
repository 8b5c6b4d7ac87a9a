// Starts the whole reference server, gRPC and HTTP, for the CLI's `serve` and `check` and for tests.
import { startGrpcServer, type GrpcServerOptions } from "./grpc.js";
import { startHttpServer, type HttpServerOptions } from "./http/server.js";

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
  };
  const grpc = await startGrpcServer(grpcOptions);
  let http;
  try {
    const httpOptions: HttpServerOptions = {
      host,
      port: options.httpPort ?? 8080,
      ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
      ...(options.log !== undefined && { log: options.log }),
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
