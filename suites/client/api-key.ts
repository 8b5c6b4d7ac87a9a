// A client holding the API key must send it with each request (part 5), Hello included where the server controls
// access by it, as a server may: the placement is open, so any header, metadata entry or query parameter, bare or as
// "Bearer K", counts.
import { pass, skip } from "../../harness/check.js";
import { carriesKey } from "../../harness/client/_internals/api-key.js";
import { failWith, type ClientCheck } from "./_internals/client-check.js";

export const apiKeyEachRequest: ClientCheck = {
  id: "client.api-key.each-request",
  title: "sends the API key it holds with each request, Hello included",
  severity: "MUST",
  spec: "part 5 (a client holding the key must send it together with each data request)",
  scenario: "api-key",
  judge(run) {
    const key = run.apiKey;
    if (key === undefined)
      return skip(
        "no API key to hand the client: give --api-key K (it reaches the client as EXAMPLE_API_KEY)",
        "--api-key",
      );
    if (run.requests.length === 0)
      return skip("the client sent no request: nothing to judge (client.hello.succeeds judges that)");
    const without = run.requests.filter((r) => !carriesKey(r.headers, r.path, key));
    const first = without[0];
    if (first !== undefined) {
      return failWith(
        `the request does not carry the API key the client holds (in no header, metadata entry or query ` +
          `parameter)${without.length > 1 ? `; ${without.length} of ${run.requests.length} requests lack it` : ""}`,
        run,
        first,
      );
    }
    return pass(`each of ${run.requests.length} request(s) carried the API key`);
  },
};
