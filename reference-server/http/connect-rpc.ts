// Hello over the Connect protocol and gRPC-Web on the HTTP port, beside the REST resources, with connect-es.
//
// The same operation as on the gRPC port, decided the same way: the reply is helloReply of the body; a body that
// is not valid UTF-8, a malformed message or one past the gRPC port's receive limit is refused; unknown fields are
// skipped. No API key is asked for (the gRPC port asks for none: Hello reads no stored data).
import type { DescMethod, JsonReadOptions, JsonWriteOptions } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import type { FastifyInstance } from "fastify";
import { exampleService } from "../../gen/example/example_pb.js";
import { helloReply } from "../hello.js";

export interface ConnectRpcOptions {
  /** Largest request message, after decompression; past it RESOURCE_EXHAUSTED, as on the gRPC port. */
  maxMessageBytes: number;
}

/**
 * Hello as the HTTP interface serves it over RPC protocols. The contract does not mark it side-effect free, and
 * the Connect protocol allows GET only for methods that are: this server's Hello has no side effects (a pure
 * function of the request), so it says so, and serves Connect GET as well as POST.
 */
export const HELLO_RPC: DescMethod = {
  ...exampleService.method.hello,
  idempotency: MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS,
};

/** The route Connect and gRPC-Web clients call: /example.exampleService/Hello. */
export const HELLO_RPC_PATH = `/${exampleService.typeName}/${exampleService.method.hello.name}`;

/**
 * protobuf-es decodes proto3 strings strictly (invalid UTF-8 is a parse error) and keeps unknown fields aside, as
 * the gRPC port's decoder does; JSON's unknown members are skipped likewise. A JSON body is turned into text
 * before it is parsed, by a decoder connect-es takes from these options (read by its JSON serialization, though
 * not in its types): a fatal one, so invalid UTF-8 is refused (INVALID_ARGUMENT), never read as U+FFFD.
 */
const JSON_OPTIONS: Partial<JsonReadOptions & JsonWriteOptions> & {
  textDecoder: { decode(bytes: Uint8Array): string };
} = {
  ignoreUnknownFields: true,
  textDecoder: new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }),
};

/** Hello's request message with body "warm-up", in a gRPC-Web envelope (flags 0, length 9). */
const WARM_UP_GRPC_WEB = Buffer.from([0, 0, 0, 0, 9, 0x0a, 7, ...Buffer.from("warm-up")]);

/**
 * One Hello over Connect and one over gRPC-Web, in-process (fastify's inject: no socket, no client), before the
 * server listens. The first RPC a fresh process serves pays for what Node and connect-es load and compile on first
 * use: connect-node makes a fetch Headers object per request, and the first one loads Node's bundled undici (about
 * 13 ms of the first call's 25 ms of CPU under --cpu-prof), the rest is code run for the first time. Measured with
 * curl, one call on a fresh server: 22 ms for gRPC-Web (49 ms for Connect when it came first) against 2 ms once
 * warm. So the first client's call is served as fast as every later one. Nothing of the warm-up is kept: the
 * replies are dropped, and the calls store nothing (Hello is a pure function of its request).
 */
export async function warmConnectRpc(app: FastifyInstance): Promise<void> {
  await app.inject({
    method: "POST",
    url: HELLO_RPC_PATH,
    headers: { "content-type": "application/json" },
    payload: '{"body":"warm-up"}',
  });
  await app.inject({
    method: "POST",
    url: HELLO_RPC_PATH,
    headers: { "content-type": "application/grpc-web+proto" },
    payload: WARM_UP_GRPC_WEB,
  });
}

export async function registerConnectRpc(app: FastifyInstance, options: ConnectRpcOptions): Promise<void> {
  await app.register(fastifyConnectPlugin, {
    // gRPC proper needs HTTP/2 trailers, which this HTTP/1.1 server cannot send: it has its own port.
    grpc: false,
    grpcWeb: true,
    connect: true,
    readMaxBytes: options.maxMessageBytes,
    jsonOptions: JSON_OPTIONS,
    routes: (router: ConnectRouter) => {
      router.rpc(HELLO_RPC as typeof exampleService.method.hello, (request) => ({ body: helloReply(request.body) }));
    },
  });
}
