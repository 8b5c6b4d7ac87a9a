// A small grpc-js server built inside tests with pass-through serializers; its Hello handler is the test's.
import * as grpc from "@grpc/grpc-js";

export type HelloHandler = (
  request: Buffer,
  call: grpc.ServerUnaryCall<Buffer, Buffer>,
) => Buffer | { code: number; details: string; trailers?: Record<string, string> };

export interface TestServer {
  address: string;
  close(): Promise<void>;
}

const pass = (b: Buffer) => b;

export async function startGrpcJsServer(hello: HelloHandler): Promise<TestServer> {
  const server = new grpc.Server({ "grpc.enable_channelz": 0 });
  const definition: grpc.ServiceDefinition<grpc.UntypedServiceImplementation> = {
    Hello: {
      path: "/example.exampleService/Hello",
      requestStream: false,
      responseStream: false,
      requestSerialize: pass,
      requestDeserialize: pass,
      responseSerialize: pass,
      responseDeserialize: pass,
    },
  };
  server.addService(definition, {
    Hello: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const out = hello(call.request, call);
      if (Buffer.isBuffer(out)) callback(null, out);
      else {
        const metadata = new grpc.Metadata();
        for (const [k, v] of Object.entries(out.trailers ?? {})) metadata.set(k, v);
        callback({ code: out.code, details: out.details, metadata });
      }
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
  };
}
