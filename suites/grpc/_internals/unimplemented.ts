// A check that one path the server does not serve gets UNIMPLEMENTED: unknown methods and unknown services alike.
import { encodeMessage } from "../../../contract/message.js";
import { fail, pass, type CheckDefinition } from "../../../harness/check.js";
import { Status, statusText } from "../../../harness/targets/grpc-target.js";
import { hello } from "./calls.js";

export function unimplementedCheck(id: string, path: string, spec: string): CheckDefinition {
  return {
    id,
    title: `a call to ${path} gets UNIMPLEMENTED`,
    severity: "MUST",
    area: "grpc",
    profile: "contract",
    spec,
    async run(ctx) {
      const result = await hello(ctx, encodeMessage("x"), { path });
      if (result.code === Status.UNIMPLEMENTED) return pass(statusText(result.code, result.details));
      return fail(`${path} got ${statusText(result.code, result.details)}, not 12 UNIMPLEMENTED`);
    },
  };
}
