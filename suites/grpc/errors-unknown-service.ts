// grpc.errors.unknown-service: a service the server does not serve gets UNIMPLEMENTED.
import { encodeMessage } from "../../harness/_internals/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { Status, statusText } from "../../harness/targets/grpc-target.js";
import { hello } from "./_internals/calls.js";

export const errorsUnknownService: CheckDefinition = {
  id: "grpc.errors.unknown-service",
  title: "a call to /example.NoSuchService/Hello gets UNIMPLEMENTED",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§4.1, gRPC statuscodes.md",
  async run(ctx) {
    const path = "/example.NoSuchService/Hello";
    const result = await hello(ctx, encodeMessage("x"), { path });
    if (result.code === Status.UNIMPLEMENTED) return pass(statusText(result.code, result.details));
    return fail(`${path} got ${statusText(result.code, result.details)}, not 12 UNIMPLEMENTED`);
  },
};
