// grpc.errors.unknown-method: a method the service does not declare gets UNIMPLEMENTED.
import { encodeMessage } from "../../harness/_internals/message.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";
import { Status, statusText } from "../../harness/targets/grpc-target.js";
import { hello } from "./_internals/calls.js";

export const errorsUnknownMethod: CheckDefinition = {
  id: "grpc.errors.unknown-method",
  title: "a call to /example.exampleService/NoSuchMethod gets UNIMPLEMENTED",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§4.1 (one operation), gRPC statuscodes.md",
  async run(ctx) {
    const path = "/example.exampleService/NoSuchMethod";
    const result = await hello(ctx, encodeMessage("x"), { path });
    if (result.code === Status.UNIMPLEMENTED) return pass(statusText(result.code, result.details));
    return fail(`${path} got ${statusText(result.code, result.details)}, not 12 UNIMPLEMENTED`);
  },
};
