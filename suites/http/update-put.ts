// http.update.put: PUT replaces a message, and a GET afterwards shows the replacement.
import { httpCheck, statusLine } from "./_internals/probe.js";
import { uniqueBody } from "./_internals/representation.js";

export const updatePut = httpCheck(
  {
    id: "http.update.put",
    title: "PUT of a representation replaces the message (2xx), and GET then shows the new body",
    severity: "MUST",
    spec: "§4.2 (method mapping: Update is PUT)",
  },
  async (p) => {
    const shown: string[] = [];
    const refused: string[] = [];
    for (const { path: c } of await p.reach()) {
      const created = await p.createOrStop(c);
      const replacement = uniqueBody("put");
      const put = await p.replace(created.uri.path, replacement);
      // A resource that does not offer replacement says so (405 with Allow, 501): nothing to judge there.
      const notOffered = p.notOffered("replace", put);
      if (notOffered !== undefined) {
        refused.push(notOffered);
        continue;
      }
      if (put.res.status < 200 || put.res.status >= 300) {
        p.problem(`PUT ${created.uri.path} answered ${statusLine(put.res)}, not a 2xx`, put);
        continue;
      }
      const read = await p.get(created.uri.path);
      const body = p.bodyOf(read.res, replacement);
      if (read.res.status !== 200 || body !== replacement) {
        p.problem(`after PUT ${created.uri.path} answered ${put.res.status}, GET shows ${read.res.status === 200 ? `body ${JSON.stringify(body)}` : statusLine(read.res)}, not the replacement ${JSON.stringify(replacement)}`, read);
      } else shown.push(`PUT ${created.uri.path} → ${put.res.status}, GET shows the replacement`);
    }
    if (shown.length === 0 && refused.length > 0 && p.problems.length === 0) p.skip(`not applicable: no resource reached offers replacement (${refused.join("; ")})`);
    return [...shown, ...refused.map((r) => `not offered: ${r}`)].join("; ");
  },
);
