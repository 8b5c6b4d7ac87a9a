// http.methods.405-allow: a method a collection does not support gets 405 with an Allow header listing those that work.
import { httpCheck, JSON_TYPE, statusLine } from "./_internals/probe.js";

/**
 * Methods the spec maps to no operation on a collection, tried in turn; none carries a body, so a server that does
 * support one changes nothing. A collection that supports them all leaves nothing to probe.
 */
const CANDIDATES = ["PATCH", "TRACE"];

export const methods405Allow = httpCheck(
  {
    id: "http.methods.405-allow",
    title: "an unsupported method gets 405 Method Not Allowed with an Allow header listing the methods that work",
    severity: "MUST",
    spec: "§4.2 (method mapping; level 2: the appropriate method and the exact status code) and §7",
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      let probed = false;
      for (const method of CANDIDATES) {
        const ex = await p.send({ method, path: c, headers: { accept: JSON_TYPE } });
        if (ex.res.status >= 200 && ex.res.status < 300) {
          p.note(`${method} ${c} is supported (${ex.res.status})`);
          continue;
        }
        probed = true;
        if (ex.res.status !== 405) {
          p.problem(`${method} ${c}, a method the collection does not support, answered ${statusLine(ex.res)}, not 405 Method Not Allowed`, ex);
          break;
        }
        const allow = (ex.res.headers["allow"] ?? []).join(",").split(",").map((m) => m.trim().toUpperCase()).filter((m) => m !== "");
        if (allow.length === 0) p.problem(`${method} ${c} answered 405 with no Allow header`, ex);
        else if (allow.includes(method)) p.problem(`${method} ${c} answered 405 but Allow lists ${method}: ${allow.join(", ")}`, ex);
        else if (!allow.includes("GET")) p.problem(`${method} ${c} answered 405 with Allow ${allow.join(", ")}, which leaves out GET, a method that works`, ex);
        else shown.push(`${method} ${c} → 405, Allow: ${allow.join(", ")}`);
        break;
      }
      if (!probed) p.skip(`the collection ${c} supports every method probed (${CANDIDATES.join(", ")})`);
    }
    return shown.join("; ");
  },
);
