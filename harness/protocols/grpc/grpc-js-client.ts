// The ordinary client: unary calls through grpc-js with pass-through (de)serializers, so checks see raw bytes.
import * as grpc from "@grpc/grpc-js";
import type { Socket } from "node:net";
import { HELLO_PATH, type MetadataValue, type UnaryCallOptions, type UnaryResult } from "../rpc.js";
import { defaultAuthority, type ConnectionOptions, type TlsMaterial } from "../../targets/connection.js";
import { MAX_REPLY_BYTES } from "../../wire/bounds.js";
import { unaryRecord } from "../../trace/records.js";
import { AheadPool } from "./ahead-pool.js";

const passThrough = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

function channelCredentials(tls: TlsMaterial | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null);
}

function toRecord(md: grpc.Metadata | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(md?.toJSON() ?? {})) {
    out[key] = values.map((v) => (typeof v === "string" ? v : Buffer.from(v).toString("base64")));
  }
  return out;
}

/** Statuses a call may end with before its connection was ever ready (grpc-js gives them itself). */
const UNANSWERED: ReadonlySet<number> = new Set([
  grpc.status.DEADLINE_EXCEEDED,
  grpc.status.CANCELLED,
  grpc.status.UNAVAILABLE,
]);

/** One default HTTP/2 window: a request body past it may still be going out when the server has answered. */
const ONE_WINDOW = 65_535;

/**
 * The receive window the client grants, per stream and per connection: room for gRPC's usual largest message (4 MiB
 * and its 5-byte prefix), so a large reply (an echo of the receive-limit probe's bodies, say) comes in one round
 * trip rather than one per 64 KiB (32 for 2 MiB through a 50 ms link). It holds no more than the client reads anyway:
 * grpc-js takes each reply as it comes, up to MAX_REPLY_BYTES, whatever the window.
 */
const RECEIVE_WINDOW = 4 * 1024 * 1024 + 5;

/**
 * The sockets of a channel of one call, and whether the call has ended: grpc-js's close() leaves a connection still
 * being set up (the server's SETTINGS not yet in) open, so such a channel's sockets are destroyed as it ends, and a
 * socket that connects after it ended is destroyed as it comes.
 */
interface OwnSockets {
  sockets: Set<Socket>;
  ended: boolean;
}

/**
 * The channel's credentials, seeing the sockets its connections run on, so that a channel of one call can stop
 * sending the rest of a body the server refused before reading it (grpc-js ends the stream, but its queued DATA
 * still goes out through the server's window), and end a connection in any state. Every method is the credentials'
 * own.
 */
function seeingSockets(credentials: grpc.ChannelCredentials, own: OwnSockets): grpc.ChannelCredentials {
  type Connector = { connect(socket: Socket): Promise<{ socket: Socket }> };
  type WithConnector = { _createSecureConnector(...args: unknown[]): Connector };
  return new Proxy(credentials, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== "_createSecureConnector" || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const connector = (value as WithConnector["_createSecureConnector"]).apply(target, args);
        const connect = connector.connect.bind(connector);
        connector.connect = async (socket) => {
          // The TCP socket from the start, so that a TLS handshake still under way ends with it too.
          if (own.ended) socket.destroy();
          own.sockets.add(socket);
          const result = await connect(socket);
          if (own.ended) result.socket.destroy();
          own.sockets.add(result.socket);
          return result;
        };
        return connector;
      };
    },
  });
}

/** A channel of one call and the sockets its connection runs on. */
interface OneCall {
  client: grpc.Client;
  own: OwnSockets;
}

/** A channel's connection failed or the channel is shut: opened ahead, it would fail its call for that alone. */
const failed = (c: OneCall): boolean => {
  const state = c.client.getChannel().getConnectivityState(false);
  return state === grpc.connectivityState.TRANSIENT_FAILURE || state === grpc.connectivityState.SHUTDOWN;
};

/**
 * Ends a channel opened ahead that no call took: its connection may still be being set up (a target that trickles
 * its SETTINGS), which grpc-js's close() leaves open, so its sockets are destroyed too, and one that connects later is
 * destroyed as it comes (seeingSockets). No call went on it: nothing is cut short.
 */
function endUnused(c: OneCall): void {
  c.own.ended = true;
  c.client.close();
  for (const s of c.own.sockets) s.destroy();
}

export class GrpcJsClient {
  #shared: grpc.Client | undefined;
  /** The shared channel's sockets: one still being set up when the client closes is ended too (close()). */
  #sharedOwn: OwnSockets = { sockets: new Set(), ended: false };
  readonly #options: ConnectionOptions;
  readonly #tls: TlsMaterial | undefined;
  /** Channels of one call opened ahead (openAhead), each taken by one fresh call. */
  readonly #ahead: AheadPool<OneCall>;

  constructor(options: ConnectionOptions, tls: TlsMaterial | undefined) {
    this.#options = options;
    this.#tls = tls;
    this.#ahead = new AheadPool<OneCall>({
      open: () => {
        const one = this.#oneCall();
        // Connects now, not at the call: grpc-js opens a channel's connection lazily otherwise.
        one.client.getChannel().getConnectivityState(true);
        return one;
      },
      usable: (c) => !failed(c),
      close: (c) => endUnused(c),
    });
  }

  /**
   * Opens `count` fresh connections ahead for calls to come with channel "fresh", at most `limit` at once; each is
   * still taken by one call only. Returns what closes those not taken.
   */
  openAhead(count: number, limit: number): () => void {
    return this.#ahead.ask(count, limit);
  }

  /** A channel of its own for one call, with the sockets its connection runs on. */
  #oneCall(): OneCall {
    const own: OwnSockets = { sockets: new Set(), ended: false };
    return { client: this.#newClient(true, own), own };
  }

  #newClient(fresh = false, own?: OwnSockets): grpc.Client {
    const opts: grpc.ChannelOptions = {
      // grpc-js shares connections between channels with equal options; a fresh channel must not.
      ...(fresh && { "grpc.use_local_subchannel_pool": 1 }),
      // See what the server sends, however large; limits are the server's to enforce.
      // grpc-js inflates a compressed reply only up to this: calls side by side cannot hold more than their share.
      "grpc.max_receive_message_length": MAX_REPLY_BYTES,
      "grpc.max_send_message_length": 64 * 1024 * 1024,
      "grpc-node.flow_control_window": RECEIVE_WINDOW,
      // A check must see one attempt, not a retried one.
      "grpc.enable_retries": 0,
      "grpc.enable_channelz": 0,
      "grpc.default_authority": this.#options.authority ?? defaultAuthority(this.#options.address),
    };
    if (this.#options.authority !== undefined)
      opts["grpc.ssl_target_name_override"] = this.#options.authority.replace(/:\d+$/, "");
    const credentials = channelCredentials(this.#tls);
    return new grpc.Client(this.#options.address.grpcTarget, own ? seeingSockets(credentials, own) : credentials, opts);
  }

  #client(): grpc.Client {
    this.#shared ??= this.#newClient(false, this.#sharedOwn);
    return this.#shared;
  }

  unary(request: Uint8Array, options: UnaryCallOptions = {}): Promise<UnaryResult> {
    const fresh = options.channel === "fresh";
    // Only a channel of its own can be dropped when refused early (below); the shared one is never.
    const one = fresh ? (this.#ahead.take() ?? this.#oneCall()) : undefined;
    const own = one?.own;
    const client = one?.client ?? this.#client();
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(this.#options.metadata)) metadata.add(k, v);
    for (const [k, v] of Object.entries(options.metadata ?? {}) as [string, MetadataValue][]) {
      metadata.add(k, typeof v === "string" ? v : Buffer.from(v));
    }
    const deadline = new Date(Date.now() + (options.deadlineMs ?? this.#options.timeoutMs));
    const startedAt = Date.now();
    return new Promise<UnaryResult>((resolve) => {
      let headers: grpc.Metadata | undefined;
      let response: Uint8Array | undefined;
      const call = client.makeUnaryRequest<Uint8Array, Uint8Array>(
        options.path ?? HELLO_PATH,
        passThrough,
        (b) => new Uint8Array(b),
        request,
        metadata,
        { deadline },
        (_err, value) => {
          response = value;
        },
      );
      call.on("metadata", (md) => (headers = md));
      const cancel = () => call.cancel();
      options.signal?.addEventListener("abort", cancel, { once: true });
      call.on("status", (status: grpc.StatusObject) => {
        // The status event comes after the callback; give the callback's value a tick to land.
        setImmediate(() => {
          options.signal?.removeEventListener("abort", cancel);
          if (own) {
            own.ended = true;
            client.close();
            // Refused with its body still going out, a channel of one call stops sending it (RFC 9113 8.1): the
            // connection is dropped, as grpc-js offers no way to reset its stream once it has the status. And one
            // that may still be being set up (no headers came, and the call ended by its deadline, a cancel or as
            // unavailable) is dropped too: grpc-js's close() leaves it open while the server's SETTINGS are due.
            const refusedMidBody = status.code !== grpc.status.OK && request.byteLength > ONE_WINDOW;
            const unanswered = headers === undefined && UNANSWERED.has(status.code);
            if (refusedMidBody || unanswered) for (const s of own.sockets) s.destroy();
          }
          const result = {
            code: status.code,
            details: status.details,
            ...(response !== undefined && status.code === grpc.status.OK && { response }),
            headers: toRecord(headers),
            trailers: toRecord(status.metadata),
          };
          const authority = this.#options.authority ?? defaultAuthority(this.#options.address);
          options.trace?.(() =>
            unaryRecord(
              "grpc",
              `${this.#tls ? "https" : "http"}://${authority}${options.path ?? HELLO_PATH}`,
              toRecord(metadata),
              request,
              options,
              startedAt,
              result,
            ),
          );
          resolve(result);
        });
      });
    });
  }

  close(): void {
    this.#ahead.close();
    const shared = this.#shared;
    this.#shared = undefined;
    if (!shared) return;
    // A connection that never became ready (a target that trickles its SETTINGS): grpc-js's close() leaves it open, so
    // its sockets are destroyed, and one that connects later as it comes. A ready one closes as grpc-js closes it.
    const state = shared.getChannel().getConnectivityState(false);
    shared.close();
    if (state === grpc.connectivityState.CONNECTING || state === grpc.connectivityState.TRANSIENT_FAILURE) {
      this.#sharedOwn.ended = true;
      for (const s of this.#sharedOwn.sockets) s.destroy();
    }
  }
}
