// Every request the client sends is valid for its protocol and valid proto3: what a legal server may refuse it for.
import { pass, skip } from "../../harness/check.js";
import { requestProblems } from "../../harness/client/validate.js";
import { failWith, type ClientCheck } from "./_internals/client-check.js";

export const requestsValid: ClientCheck = {
  id: "client.requests.valid",
  title: "sends requests valid for their protocol (content-type, framing, compression) and valid proto3",
  severity: "MUST",
  spec: "part 2 (proto3 Message), part 4.1, part 4.2 rule 11, part 7 (4xx: the client's request was wrong)",
  scenario: "usual",
  async judge(run) {
    const judged = await Promise.all(run.requests.map(async (r) => ({ r, problems: await requestProblems(r) })));
    const bad = judged.filter((j) => j.problems.length > 0);
    const first = bad[0];
    if (first !== undefined) {
      const more = bad.length > 1 ? ` (and ${bad.length - 1} more request(s) like it)` : "";
      return failWith(`${first.problems.join("; ")}${more}`, run, first.r);
    }
    if (run.requests.length === 0)
      return skip("the client sent no request to judge (client.hello.succeeds judges a client that sends none)");
    return pass(`${run.requests.length} request(s), each valid for its protocol`);
  },
};
