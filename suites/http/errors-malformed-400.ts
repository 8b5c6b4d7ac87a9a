// http.errors.malformed-400: a malformed representation gets 400 (a 4xx at least), never a 5xx or a 2xx.
import { httpCheck, statusLine } from "./_internals/probe.js";

/** JSON cut off in the middle: malformed in any parser, whatever the resource's fields. */
const MALFORMED = '{"body": "conformance';

export const errorsMalformed400 = httpCheck(
  {
    id: "http.errors.malformed-400",
    title: "a POST with malformed JSON gets 400 Bad Request (a 4xx), never a 5xx",
    severity: "MUST",
    spec: "§7 (4xx: the client's request was wrong; 5xx: a server-side error)",
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const ex = await p.sendBody("POST", c, MALFORMED);
      p.track(c, ex);
      const { status } = ex.res;
      if (status === 400) shown.push(`POST ${c} with malformed JSON → 400`);
      else if (status > 400 && status < 500) shown.push(`POST ${c} with malformed JSON → ${status} (a 4xx, though 400 says it best)`);
      else p.problem(`POST ${c} with malformed JSON answered ${statusLine(ex.res)}, not 400${status >= 500 ? ": the client's mistake is reported as the server's" : ""}`, ex);
    }
    return shown.join("; ");
  },
);
