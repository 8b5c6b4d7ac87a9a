// http.content-type.415: a POST (or a store's creating PUT) whose Content-Type is not a representation the server reads
// gets 415.
import { httpCheck, statusLine } from "./_internals/probe.js";
import { uniqueBody } from "./_internals/representation.js";

export const contentType415 = httpCheck(
  {
    id: "http.content-type.415",
    title: "a POST with an unsupported Content-Type (text/plain) gets 415 Unsupported Media Type",
    severity: "MUST",
    spec: "§1 principle 3 (JSON or XML representations), §4.2 rule 8 and §7",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const ex = await p.sendCreation(c, uniqueBody("plain"), "text/plain");
      p.track(c, ex);
      if (ex.res.status === 415) shown.push(`${ex.req.method} ${ex.req.path} as text/plain → 415`);
      else
        p.problem(
          `${ex.req.method} ${ex.req.path} with Content-Type: text/plain answered ${statusLine(ex.res)}, not 415 ` +
            `Unsupported Media Type`,
          ex,
        );
    }
    return shown.join("; ");
  },
);
