// exampleService.Hello on grpc-js as anyone would write it from the documentation: @grpc/proto-loader's generated
// (de)serializers, no protocol guard, no strict decoding, no limits beyond grpc-js's own. The benchmark's yardstick
// for what the reference server's guard and strict decoding cost. It gives the reference's reply, so both do the
// same work. Prints "listening 127.0.0.1:PORT"; SIGTERM stops it.
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { fileURLToPath } from "node:url";

const CONTRACT = fileURLToPath(new URL("../proto/example/example.proto", import.meta.url));
const port = Number(process.argv[2] ?? 0);

const definition = grpc.loadPackageDefinition(protoLoader.loadSync(CONTRACT, { keepCase: true, defaults: true }));
const server = new grpc.Server();
server.addService(definition.example.exampleService.service, {
  Hello: (call, callback) =>
    callback(null, { body: call.request.body === "" ? "Hello" : `Hello, ${call.request.body}` }),
});
server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, bound) => {
  if (err) {
    console.error(`plain-grpc-js-server: ${err.message}`);
    process.exit(1);
  }
  console.log(`listening 127.0.0.1:${bound}`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.once(signal, () => {
    const force = setTimeout(() => server.forceShutdown(), 2000);
    force.unref();
    server.tryShutdown(() => clearTimeout(force));
  });
}
