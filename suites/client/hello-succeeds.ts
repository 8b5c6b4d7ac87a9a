// The client calls Hello against a server that answers at once, and reports its work done (exit 0).
import { pass } from "../../harness/check.js";
import { endWords, failWith, hellos, succeeded, type ClientCheck } from "./_internals/client-check.js";

export const helloSucceeds: ClientCheck = {
  id: "client.hello.succeeds",
  title: "calls Hello and succeeds against a server answering as usual",
  severity: "MUST",
  spec: "part 4.1 (Hello: one Message in, one Message out)",
  scenario: "usual",
  judge(run) {
    const calls = hellos(run);
    if (run.client.hung) return failWith(`the client ${endWords(run)}`, run, calls.at(-1) ?? run.requests.at(-1));
    if (calls.length === 0)
      return failWith(
        `the client made no Hello call (a client under check calls Hello at least once) and ${endWords(run)}`,
        run,
        run.requests[0],
      );
    if (!succeeded(run)) {
      const refused = calls.find((c) => c.answer !== "OK");
      return failWith(
        `the client ${endWords(run)} against a server that answered its Hello as usual`,
        run,
        refused ?? calls.at(-1),
      );
    }
    return pass(`called Hello ${calls.length} time(s) and exited 0`);
  },
};
