// The reference gRPC server: exampleService.Hello on grpc-js, with health, reflection and explicit limits.
import { isUtf8 } from "node:buffer";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";
import { HealthImplementation, protoPath as healthProtoPath } from "grpc-health-check";
import * as protoLoader from "@grpc/proto-loader";
import { CONTRACT_FILE } from "../common/paths.js";
import { decodeMessage, encodeMessage } from "../common/message.js";
import { DEFAULT_MAX_HEADER_LIST_BYTES, guardGrpcServer, receiveWindowFor } from "./grpc-guard.js";
import { defaultLimits, validateLimits, type ProtectionLimits } from "./protection.js";
import { helloReply } from "./hello.js";
import type { OwedLedger } from "./owed.js";
import { LOADER_OPTIONS, loadContract, SERVICE_NAME } from "./proto.js";
import { createLogger, type LogOptions, type Logger } from "./logger.js";

export type { LogLevel } from "./logger.js";

export interface GrpcServerOptions extends LogOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Receive limit; past it a call gets RESOURCE_EXHAUSTED. Default 4 MiB. */
  maxReceiveMessageBytes?: number;
  tls?: { certFile: string; keyFile: string };
  /** How long in-flight calls may run on close before the server is forced down. Default 5 s. */
  shutdownGraceMs?: number;
  /** Overrides of the protective limits (SERVER_CHANNEL_OPTIONS), e.g. a shorter idle time. */
  limits?: Partial<Record<keyof typeof SERVER_CHANNEL_OPTIONS, number>>;
  /** Connections, calls in flight and the memory watermark; default defaultLimits(). */
  protection?: Partial<ProtectionLimits>;
  /** What the server owes clients that do not read (owed.ts); default a ledger of its own with the default limits. */
  ledger?: OwedLedger;
  /**
   * Largest header block a call may send; past it the call is refused RESOURCE_EXHAUSTED (or, once the client has
   * acknowledged the limit, node:http2 resets the stream). Default 16 KiB.
   */
  maxHeaderListBytes?: number;
}

export interface GrpcServerHandle {
  /** host:port as bound. */
  address: string;
  port: number;
  /** In-flight calls finish, new ones are refused; forced after shutdownGraceMs. */
  close(): Promise<void>;
  /** What the health service says: NOT_SERVING while a dependency (the message store) cannot be reached. */
  setServing(serving: boolean): void;
}

export const DEFAULT_MAX_RECEIVE_BYTES = 4 * 1024 * 1024;

/**
 * grpc-js leaves these effectively off; a reference that anyone may point a client at sets them. The values
 * are generous for a unary service and bound what one client can hold open.
 */
export const SERVER_CHANNEL_OPTIONS = {
  "grpc.keepalive_time_ms": 60_000, // ping an idle connection every minute
  "grpc.keepalive_timeout_ms": 20_000, // and drop it when the ping goes unanswered
  "grpc.keepalive_permit_without_calls": 1,
  // Pings more often than this are abuse: GOAWAY (enforced by the guard).
  "grpc.http2.min_ping_interval_without_data_ms": 10_000,
  "grpc.http2.max_ping_strikes": 2,
  "grpc.max_connection_idle_ms": 5 * 60_000,
  "grpc.max_connection_age_ms": 30 * 60_000,
  "grpc.max_connection_age_grace_ms": 10_000,
  "grpc.max_concurrent_streams": 100, // per connection; the guard bounds calls across connections
  "grpc.enable_channelz": 0, // a known source of leaks, and nothing here reads it
} as const;

const passThrough = (b: Buffer): Buffer => b;

const HELLO_PATH = `/${SERVICE_NAME}/Hello`;
const SERVED_PATHS = [HELLO_PATH];
const HEALTH_PATHS = ["/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"] as const;
const REFLECTION_PATHS = [
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

/**
 * The request nearly every client sends, Message with field 1 alone and its length in one or two bytes, decoded
 * as strictly as decodeMessage does (the length must end exactly at the end, the bytes must be UTF-8, and a leading
 * byte order mark is left to decodeMessage, whose decoder strips it) but without a reader and a TextDecoder: under
 * load with --cpu-prof they cost about 0.7 µs a call. Undefined for anything else, which decodeMessage judges.
 */
export function commonBody(request: Buffer): string | undefined {
  const n = request.length;
  if (n === 0) return "";
  if (n < 2 || request[0] !== 0x0a) return undefined;
  const b1 = request[1] as number;
  let at = 2;
  let length = b1;
  if (b1 & 0x80) {
    const b2 = request[2];
    if (b2 === undefined || b2 & 0x80) return undefined;
    length = (b1 & 0x7f) | (b2 << 7);
    at = 3;
  }
  if (at + length !== n) return undefined;
  if (length >= 3 && request[at] === 0xef && request[at + 1] === 0xbb && request[at + 2] === 0xbf) return undefined;
  if (!isUtf8(request.subarray(at))) return undefined;
  return request.toString("utf8", at, n);
}

/**
 * encodeMessage's bytes straight into a pooled Buffer, for replies whose length fits in two bytes: a Uint8Array of
 * its own and a TextEncoder per reply cost about 1.3 µs a call under load (--cpu-prof). The text is valid UTF-8
 * (it comes from a strictly decoded body), so Buffer's encoder and TextEncoder give the same bytes.
 */
export function encodeReply(text: string): Buffer {
  const length = Buffer.byteLength(text, "utf8");
  if (length === 0 || length >= 0x4000) {
    const bytes = encodeMessage(text);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const head = length < 0x80 ? 2 : 3;
  const out = Buffer.allocUnsafe(head + length);
  out[0] = 0x0a; // field 1, length-delimited
  if (head === 2) out[1] = length;
  else {
    out[1] = (length & 0x7f) | 0x80;
    out[2] = length >>> 7;
  }
  out.write(text, head, "utf8");
  return out;
}

/** Hello on raw bytes: grpc-js hands over the message as received, and we decode it strictly. */
function helloHandler(log: Logger, logCalls: boolean): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    // The per-call line's clock and fields only when it is written: under load they were pure waste.
    const started = logCalls ? performance.now() : 0;
    let code: grpc.status = grpc.status.OK;
    const common = commonBody(call.request);
    if (common !== undefined) {
      callback(null, encodeReply(helloReply(common)));
    } else {
      const decoded = decodeMessage(call.request);
      if (!decoded.ok) {
        // Invalid UTF-8 in a proto3 string is the client's mistake; bytes that are no Message at all are a
        // protocol error, as grpc-go and grpc-java report a failed parse.
        code = /UTF-8/.test(decoded.reason) ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL;
        callback({ code, details: decoded.reason });
      } else {
        callback(null, encodeReply(helloReply(decoded.message.body)));
      }
    }
    if (logCalls)
      log.debug({
        msg: "call",
        method: "Hello",
        code: grpc.status[code],
        requestBytes: call.request.length,
        ms: Math.round(performance.now() - started),
      });
  };
}

function helloDefinition(): grpc.ServiceDefinition {
  const pkg = loadContract();
  const service = pkg[SERVICE_NAME] as grpc.ServiceDefinition | undefined;
  const hello = service?.["Hello"];
  if (!hello) throw new Error(`the contract does not declare ${SERVICE_NAME}.Hello`);
  return { Hello: { ...hello, requestDeserialize: passThrough, responseSerialize: passThrough } };
}

export async function startGrpcServer(options: GrpcServerOptions = {}): Promise<GrpcServerHandle> {
  const host = options.host ?? "127.0.0.1";
  const log = createLogger(options, "info");
  const server = new grpc.Server({
    ...SERVER_CHANNEL_OPTIONS,
    ...options.limits,
    "grpc.max_receive_message_length": options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_BYTES,
  });
  server.addService(helloDefinition(), { Hello: helloHandler(log, log.isLevelEnabled("debug")) });
  const health = new HealthImplementation({ "": "SERVING", [SERVICE_NAME]: "SERVING" });
  health.addToServer(server);
  // Reflection describes everything served, so grpcurl can list and call it all.
  new ReflectionService(protoLoader.loadSync([CONTRACT_FILE, healthProtoPath], LOADER_OPTIONS)).addToServer(server);

  const credentials = options.tls
    ? grpc.ServerCredentials.createSsl(null, [
        { cert_chain: readFileSync(options.tls.certFile), private_key: readFileSync(options.tls.keyFile) },
      ])
    : grpc.ServerCredentials.createInsecure();
  const bindHost = host.includes(":") ? `[${host}]` : host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${bindHost}:${options.port ?? 50051}`, credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  const address = `${bindHost}:${port}`;
  const limits = { ...SERVER_CHANNEL_OPTIONS, ...options.limits };
  let guard;
  try {
    guard = guardGrpcServer(server, {
      paths: new Set([...SERVED_PATHS, ...HEALTH_PATHS, ...REFLECTION_PATHS]),
      unaryPaths: new Set([HELLO_PATH, HEALTH_PATHS[0]]),
      streamingRequestPaths: new Set(REFLECTION_PATHS),
      minPingIntervalWithoutCallsMs: limits["grpc.http2.min_ping_interval_without_data_ms"],
      maxPingStrikes: limits["grpc.http2.max_ping_strikes"],
      protection: validateLimits({ ...defaultLimits(), ...options.protection }),
      maxHeaderListBytes: options.maxHeaderListBytes ?? DEFAULT_MAX_HEADER_LIST_BYTES,
      receiveWindowBytes: receiveWindowFor(options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_BYTES),
      ...(options.ledger !== undefined && { ledger: options.ledger }),
      // What an attacker sends is not logged, only what the server did about it.
      onEvent: (what, detail) => log.debug({ msg: what, detail }),
    });
  } catch (err) {
    server.forceShutdown();
    throw err;
  }
  log.info({ msg: "grpc listening", address, tls: Boolean(options.tls) });

  let closing: Promise<void> | undefined;
  return {
    address,
    port,
    setServing(serving) {
      if (closing) return;
      const status = serving ? "SERVING" : "NOT_SERVING";
      health.setStatus("", status);
      health.setStatus(SERVICE_NAME, status);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        health.setStatus("", "NOT_SERVING");
        health.setStatus(SERVICE_NAME, "NOT_SERVING");
        // tryShutdown waits for every open session, which a client may hold forever: bound it.
        const timer = setTimeout(() => {
          log.info({ msg: "grpc shutdown forced", afterMs: options.shutdownGraceMs ?? 5000 });
          server.forceShutdown();
          // grpc-js destroys only the sessions channelz tracks; the guard knows them all.
          guard.destroySessions();
          guard.stop();
          resolve();
        }, options.shutdownGraceMs ?? 5000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          guard.stop();
          log.info({ msg: "grpc stopped" });
          resolve();
        });
      });
      return closing;
    },
  };
}
