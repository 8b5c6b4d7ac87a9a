// `serve`: runs the reference server until SIGTERM or SIGINT; the first two lines name the bound addresses.
import type { Command } from "commander";
import { ConformanceError } from "../errors.js";
import { integer } from "./check-command.js";
import type { CliIo } from "./io.js";

interface ServeOptions {
  host: string;
  grpcPort: number;
  httpPort: number;
  apiKey?: string;
  tlsCert?: string;
  tlsKey?: string;
  maxMessageBytes?: number;
  logLevel: "silent" | "info" | "debug";
}

export function addServeCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command("serve")
    .description("run the reference server (gRPC and HTTP) until stopped; prints `grpc HOST:PORT` and `http URL` first")
    .option("--host <host>", "interface to bind", "127.0.0.1")
    .option("--grpc-port <port>", "gRPC port (0 picks a free one)", integer("--grpc-port", 0, 65535), 50051)
    .option("--http-port <port>", "HTTP port (0 picks a free one)", integer("--http-port", 0, 65535), 8080)
    .option("--api-key <key>", "require this key in X-API-Key on HTTP data requests (or EXAMPLE_API_KEY)")
    .option("--tls-cert <file>", "TLS certificate (PEM) for gRPC")
    .option("--tls-key <file>", "TLS key (PEM) for gRPC")
    .option("--max-message-bytes <n>", "gRPC receive limit (default 4 MiB)", integer("--max-message-bytes", 1, 1 << 30))
    .option("--log-level <level>", "silent, info or debug (one line per request)", "info")
    .action(async (opts: ServeOptions) => {
      if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined)) {
        throw new ConformanceError("usage", "--tls-cert and --tls-key go together");
      }
      if (!["silent", "info", "debug"].includes(opts.logLevel)) {
        throw new ConformanceError("usage", `--log-level ${opts.logLevel}: expected silent, info or debug`);
      }
      const apiKey = opts.apiKey ?? io.env.EXAMPLE_API_KEY;
      const { startReferenceServer } = await import("../../reference-server/start.js");
      const server = await startReferenceServer({
        host: opts.host,
        grpcPort: opts.grpcPort,
        httpPort: opts.httpPort,
        ...(apiKey !== undefined && apiKey !== "" && { apiKey }),
        ...(opts.tlsCert !== undefined && opts.tlsKey !== undefined && { tls: { certFile: opts.tlsCert, keyFile: opts.tlsKey } }),
        ...(opts.maxMessageBytes !== undefined && { maxReceiveMessageBytes: opts.maxMessageBytes }),
        log: opts.logLevel,
      });
      io.stdout(`grpc ${server.grpcAddress}\nhttp ${server.httpUrl}\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: NodeJS.Signals) => {
          process.off("SIGTERM", stop);
          process.off("SIGINT", stop);
          io.stderr(`example-conformance: ${signal}: finishing in-flight calls\n`);
          server.close().then(resolve, (err: unknown) => {
            io.stderr(`example-conformance: shutdown: ${String(err)}\n`);
            setExit(1);
            resolve();
          });
        };
        process.on("SIGTERM", stop);
        process.on("SIGINT", stop);
      });
    });
}
