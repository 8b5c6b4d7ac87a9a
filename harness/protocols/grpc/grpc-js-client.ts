// The ordinary client: unary calls through grpc-js with pass-through (de)serializers, so checks see raw bytes.
import * as grpc from "@grpc/grpc-js";
import { HELLO_PATH, type MetadataValue, type UnaryCallOptions, type UnaryResult } from "../../targets/grpc-target.js";
import { defaultAuthority, type ConnectionOptions, type TlsMaterial } from "../../targets/connection.js";
import { MAX_REPLY_BYTES } from "../../targets/read-bounds.js";
import { unaryRecord } from "../../trace/records.js";

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

export class GrpcJsClient {
  #shared: grpc.Client | undefined;
  readonly #options: ConnectionOptions;
  readonly #tls: TlsMaterial | undefined;

  constructor(options: ConnectionOptions, tls: TlsMaterial | undefined) {
    this.#options = options;
    this.#tls = tls;
  }

  #newClient(fresh = false): grpc.Client {
    const opts: grpc.ChannelOptions = {
      // grpc-js shares connections between channels with equal options; a fresh channel must not.
      ...(fresh && { "grpc.use_local_subchannel_pool": 1 }),
      // See what the server sends, however large; limits are the server's to enforce.
      // grpc-js inflates a compressed reply only up to this: calls side by side cannot hold more than their share.
      "grpc.max_receive_message_length": MAX_REPLY_BYTES,
      "grpc.max_send_message_length": 64 * 1024 * 1024,
      // A check must see one attempt, not a retried one.
      "grpc.enable_retries": 0,
      "grpc.enable_channelz": 0,
      "grpc.default_authority": this.#options.authority ?? defaultAuthority(this.#options.address),
    };
    if (this.#options.authority !== undefined) opts["grpc.ssl_target_name_override"] = this.#options.authority.replace(/:\d+$/, "");
    return new grpc.Client(this.#options.address.grpcTarget, channelCredentials(this.#tls), opts);
  }

  #client(): grpc.Client {
    this.#shared ??= this.#newClient();
    return this.#shared;
  }

  unary(request: Uint8Array, options: UnaryCallOptions = {}): Promise<UnaryResult> {
    const fresh = options.channel === "fresh";
    const client = fresh ? this.#newClient(true) : this.#client();
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
          if (fresh) client.close();
          const result = {
            code: status.code,
            details: status.details,
            ...(response !== undefined && status.code === grpc.status.OK && { response }),
            headers: toRecord(headers),
            trailers: toRecord(status.metadata),
          };
          const authority = this.#options.authority ?? defaultAuthority(this.#options.address);
          options.trace?.(() => unaryRecord(`${this.#tls ? "https" : "http"}://${authority}${options.path ?? HELLO_PATH}`, toRecord(metadata), request, options, startedAt, result));
          resolve(result);
        });
      });
    });
  }

  close(): void {
    this.#shared?.close();
    this.#shared = undefined;
  }
}
