// http.errors.client-error-class: client mistakes (an unknown id or path, a representation of the wrong shape) get a
// 4xx.
import type { HttpRequest } from "../../harness/targets/http-target.js";
import { httpCheck, type Exchange, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, uniqueBody } from "./_internals/representation.js";

export const errorsClientErrorClass = httpCheck(
  {
    id: "http.errors.client-error-class",
    title:
      "no client mistake gets a 5xx or a 2xx: unknown ids and paths, and representations that are not a message, " +
      "get a 4xx; an empty POST gets a 2xx or a 4xx",
    severity: "MUST",
    spec: "§7 (4xx: the client's request was wrong)",
    independent: true,
  },
  async (p) => {
    let probes = 0;
    for (const c of p.collections) {
      const missing = `${c}/${uniqueBody("no-such-id")}`;
      const mistakes: [string, HttpRequest][] = [
        ["a GET of an id that does not exist", { method: "GET", path: missing, headers: { accept: JSON_TYPE } }],
        ["a DELETE of an id that does not exist", { method: "DELETE", path: missing, headers: { accept: JSON_TYPE } }],
        [
          "a GET of a path that does not exist",
          { method: "GET", path: `/${uniqueBody("no-such-resource")}`, headers: { accept: JSON_TYPE } },
        ],
      ];
      // §2: body is a string; these are not Message representations.
      const shapes: [string, string][] = [
        ["a body that is a number", '{"body": 42}'],
        ["a JSON array instead of a message", '["conformance"]'],
      ];
      const sent: [string, () => Promise<Exchange>][] = [
        ...mistakes.map(([what, req]): [string, () => Promise<Exchange>] => [what, () => p.send(req)]),
        ...shapes.map(([what, body]): [string, () => Promise<Exchange>] => [what, () => p.sendCreation(c, body)]),
      ];
      // Each mistake stands alone (none reads what another did): all sent side by side, judged in order.
      const [empty, ...answers] = await p.all([() => p.sendCreation(c, ""), ...sent.map(([, send]) => send)]);
      emptyPost(p, c, empty as Exchange);
      for (const [i, [what]] of sent.entries()) {
        const ex = answers[i] as Exchange;
        probes++;
        p.track(c, ex);
        const { status } = ex.res;
        if (status < 400 || status >= 500)
          p.problem(`${what} (${ex.req.method} ${ex.req.path}) answered ${statusLine(ex.res)}, not a 4xx`, ex);
      }
    }
    return `${probes} client mistakes each got a 4xx`;
  },
);

/**
 * An empty body is no client mistake to insist on: Message's one field is optional (part 2), and the most used Node
 * framework reads an empty JSON body as {}, so a server may create a message with the empty body from it (2xx) or
 * refuse it (4xx). Only a 5xx, a server error for a request either way legal to answer, is wrong.
 */
function emptyPost(p: Probe, c: string, ex: Exchange): void {
  p.track(c, ex);
  const { status } = ex.res;
  const sent = `an empty ${ex.req.method} ${ex.req.path}`;
  if (status >= 200 && status < 300) p.note(`${sent} creates a message (${status})`);
  else if (status >= 400 && status < 500) p.note(`${sent} is refused (${status})`);
  else
    p.problem(
      `${sent} answered ${statusLine(ex.res)}: an empty body may create a message (2xx) or be refused (4xx), ` +
        `never a server error`,
      ex,
    );
}
