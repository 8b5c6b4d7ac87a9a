// http.stateless.no-session: fresh connections without cookies get the same answers, and a cookie the server sets
// changes nothing.
import { parse as parseSetCookie } from "set-cookie-parser";
import type { HttpResponse } from "../../harness/targets/http-target.js";
import { type Created, type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import type { Located } from "./_internals/uri.js";
import { messageJson, uniqueBody } from "./_internals/representation.js";

export const statelessNoSession = httpCheck(
  {
    id: "http.stateless.no-session",
    title:
      "no flow needs a session: the same answers on fresh connections with no cookies, and a cookie the server " +
      "sets changes nothing",
    severity: "MUST",
    spec: "§1 principles 1 and 2 (the server stores no client context)",
    // Its question is whether an answer needs a session, which a server may tie to a connection as to a cookie.
    connections: "fresh",
    // Its own message, by its URI, on connections of its own: what other checks send beside it is on theirs.
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      // Neither reads what the other did: side by side, each without a cookie, on a fresh connection.
      const [list, created] = (await p.all<Exchange | Created>([() => p.get(c), () => p.createOrStop(c)])) as [
        Exchange,
        Created & { uri: Located },
      ];
      const path = created.uri.path;
      const cookie = cookiesOf([list.res, created.ex.res]);
      // Every request of the target is on a fresh connection and carries no cookie.
      const first = await p.get(path);
      const second = await p.get(path);
      if (first.res.status !== second.res.status || p.bodyOf(first.res) !== p.bodyOf(second.res)) {
        p.problem(
          `two GETs of ${path} on fresh connections got ${summary(p, first)} and then ${summary(p, second)}`,
          second,
        );
      }
      if (cookie === undefined) {
        shown.push(`${c}: no cookie set; the same answers on fresh connections without one`);
        continue;
      }
      const withCookie = await p.get(path, { accept: "application/json", cookie });
      if (withCookie.res.status !== second.res.status || p.bodyOf(withCookie.res) !== p.bodyOf(second.res)) {
        p.problem(
          `GET ${path} answers ${summary(p, withCookie)} with the cookie the server set (${cookie}) and ` +
            `${summary(p, second)} without it`,
          withCookie,
        );
      }
      // The same replacement both times, so that the second PUT finds what the first left if it worked.
      const replacement = uniqueBody("session");
      // Conditional when the server asks (428): its own validator sent back, so that the cookie is the one difference.
      const put = {
        method: "PUT",
        path,
        headers: { accept: "application/json", "content-type": "application/json" },
        body: messageJson(replacement),
      };
      const putWithout = await p.change(put);
      const putWith = await p.change({ ...put, headers: { ...put.headers, cookie } });
      if (ok(putWith.res) && !ok(putWithout.res)) {
        p.problem(
          `PUT ${path} answers ${statusLine(putWithout.res)} without the cookie the server set and ` +
            `${statusLine(putWith.res)} with it: the flow needs a session`,
          putWithout,
        );
      } else if (putWith.res.status !== putWithout.res.status) {
        p.problem(
          `PUT ${path} answers ${statusLine(putWith.res)} with the cookie the server set and ` +
            `${statusLine(putWithout.res)} without it`,
          putWith,
        );
      }
      p.note(`the server sets a cookie (${cookie}) that changes no answer`);
      shown.push(`${c}: the same answers with and without the cookie`);
    }
    return shown.join("; ");
  },
);

const ok = (res: HttpResponse) => res.status >= 200 && res.status < 300;

function summary(p: Probe, ex: Exchange): string {
  return `${statusLine(ex.res)}${ex.res.status === 200 ? ` (body ${JSON.stringify(p.bodyOf(ex.res))})` : ""}`;
}

/**
 * The cookies the server asked for, as a client's jar would send them back: a later value of a name replaces an
 * earlier.
 */
function cookiesOf(responses: readonly HttpResponse[]): string | undefined {
  const jar = new Map<string, string>();
  for (const cookie of parseSetCookie(
    responses.flatMap((r) => r.headers["set-cookie"] ?? []),
    { decodeValues: false },
  )) {
    if (cookie.name !== "") jar.set(cookie.name, cookie.value);
  }
  return jar.size === 0 ? undefined : [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}
