// http.methods.405-allow: a method the collection does not serve gets 405 with an Allow header, or 501 when the server
// implements it nowhere.
import { type Exchange, type Probe, httpCheck, statusLine } from "./_internals/probe.js";
import { JSON_TYPE } from "./_internals/representation.js";

/**
 * Methods the spec maps to no operation on a collection, tried in turn; none carries a body. A collection may
 * serve any of them (a bulk PATCH, say): what it serves is read from OPTIONS' Allow first, and only a method it
 * does not serve is judged.
 */
const CANDIDATES = ["PATCH", "TRACE"];
/** Answers that say the request reached a method the resource serves, but its (absent) body was wrong. */
const BODY_COMPLAINTS = new Set([400, 411, 415, 422]);

/**
 * An extension method no registry names and no server implements (RFC 9110 9.1, 16.1): asked only when the
 * collection answered every candidate 2xx. A 2xx to it shows a server that answers 2xx whatever the method, so its
 * 2xx to PATCH and TRACE showed nothing served. A parser that knows only registered methods may refuse it (400):
 * then nothing is judged by it.
 */
const UNKNOWN_METHOD = "CONFORMANCE-NO-SUCH-METHOD";

const allowOf = (ex: Exchange) =>
  (ex.res.headers["allow"] ?? [])
    .join(",")
    .split(",")
    .map((m) => m.trim().toUpperCase())
    .filter((m) => m !== "");

export const methods405Allow = httpCheck(
  {
    id: "http.methods.405-allow",
    title:
      "a method the collection does not serve gets 405 Method Not Allowed with an Allow header listing those " +
      "that work (or 501 Not Implemented, for one the server implements nowhere)",
    severity: "MUST",
    spec: "§4.2 (method mapping; level 2: the appropriate method and the exact status code) and §7",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    const unjudged: string[] = [];
    for (const { path: c } of await p.reach()) {
      const options = await p.send({ method: "OPTIONS", path: c, headers: { accept: JSON_TYPE } });
      const served = options.res.status >= 200 && options.res.status < 300 ? allowOf(options) : [];
      let judged = false;
      let answered2xx = 0;
      for (const method of CANDIDATES) {
        if (served.includes(method)) {
          p.note(`${method} ${c} is served (OPTIONS lists it)`);
          continue;
        }
        const ex = await p.send({ method, path: c, headers: { accept: JSON_TYPE } });
        const { status } = ex.res;
        if (status >= 200 && status < 300) {
          p.note(`${method} ${c} is served (${status})`);
          answered2xx++;
          continue;
        }
        if (served.length === 0 && BODY_COMPLAINTS.has(status)) {
          p.note(`${method} ${c} answered ${status}: served, it seems, but for a body`);
          continue;
        }
        judged = true;
        if (status === 501) {
          shown.push(`${method} ${c} → 501 Not Implemented`);
          break;
        }
        if (status !== 405) {
          p.problem(
            `${method} ${c}, a method the collection does not ` +
              `serve${served.length ? ` (OPTIONS allows ${served.join(", ")})` : ""}, answered ` +
              `${statusLine(ex.res)}, not 405 Method Not Allowed (or 501 Not Implemented)`,
            ex,
          );
          break;
        }
        const allow = allowOf(ex);
        if (allow.length === 0) p.problem(`${method} ${c} answered 405 with no Allow header`, ex);
        else if (allow.includes(method))
          p.problem(`${method} ${c} answered 405 but Allow lists ${method}: ${allow.join(", ")}`, ex);
        else if (!allow.includes("GET"))
          p.problem(
            `${method} ${c} answered 405 with Allow ${allow.join(", ")}, which leaves out GET, a method that works`,
            ex,
          );
        else shown.push(`${method} ${c} → 405, Allow: ${allow.join(", ")}`);
        break;
      }
      if (!judged && answered2xx === CANDIDATES.length) judged = await answersAnyMethod(p, c);
      if (!judged) unjudged.push(c);
    }
    const every = `serves every method probed (${CANDIDATES.join(", ")})`;
    if (shown.length === 0 && p.problems.length === 0)
      p.skip(`the collection${unjudged.length > 1 ? "s" : ""} ${unjudged.join(", ")} ${every}`);
    if (unjudged.length > 0) p.note(`${unjudged.join(", ")} ${every}`);
    return shown.join("; ");
  },
);

/**
 * Whether a collection that answered 2xx to every candidate answers 2xx to a method nobody implements as well:
 * then "served" meant nothing, and the check fails with that exchange (judged). A 405 or 501 to it keeps the
 * candidates' 2xx as methods served.
 */
async function answersAnyMethod(p: Probe, c: string): Promise<boolean> {
  const ex = await p.send({ method: UNKNOWN_METHOD, path: c, headers: { accept: JSON_TYPE } });
  if (ex.res.status < 200 || ex.res.status >= 300) return false;
  p.problem(
    `${UNKNOWN_METHOD} ${c}, a method no server implements, answered ${statusLine(ex.res)}, as ` +
      `${CANDIDATES.join(" and ")} did: a 2xx whatever the method serves none of them; a method the collection ` +
      `does not serve gets 405 Method Not Allowed with Allow (or 501 Not Implemented)`,
    ex,
  );
  return true;
}
