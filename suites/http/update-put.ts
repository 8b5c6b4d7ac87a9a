// http.update.put: PUT replaces a message, and a GET afterwards shows the replacement: a bare {"body"}, and the
// server's own representation as its GET shows it (an envelope, JSON:API, HAL), with only the body changed.
import { representationOf } from "./_internals/links.js";
import { type Exchange, type Probe, httpCheck, statusLine } from "./_internals/probe.js";
import { findString, JSON_TYPE, uniqueBody, type ValuePath } from "./_internals/representation.js";

export const updatePut = httpCheck(
  {
    id: "http.update.put",
    title: "PUT of a representation replaces the message (2xx), and GET then shows the new body",
    severity: "MUST",
    spec: "§4.2 (method mapping: Update is PUT)",
    independent: true,
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
        p.problem(
          `after PUT ${created.uri.path} answered ${put.res.status}, GET shows ` +
            `${read.res.status === 200 ? `body ${JSON.stringify(body)}` : statusLine(read.res)}, not the ` +
            `replacement ${JSON.stringify(replacement)}`,
          read,
        );
        continue;
      }
      shown.push(`PUT ${created.uri.path} → ${put.res.status}, GET shows the replacement`);
      const own = await replaceInOwnShape(p, read, replacement);
      if (own !== undefined) shown.push(own);
    }
    if (shown.length === 0 && refused.length > 0 && p.problems.length === 0)
      p.skip(`not applicable: no resource reached offers replacement (${refused.join("; ")})`);
    return [...shown, ...refused.map((r) => `not offered: ${r}`)].join("; ");
  },
);

/** A copy of a JSON value with the string at this place replaced. */
function withValueAt(value: unknown, at: ValuePath, text: string): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as unknown;
  let node = copy as Record<string | number, unknown>;
  for (const step of at.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[at[at.length - 1] as string | number] = text;
  return copy;
}

/**
 * PUTs back the representation the message's GET showed (its JSON, whatever its shape), the body alone changed, and
 * reads it again: a server that answers 2xx to its own representation must store it. One that refuses it (4xx, a
 * read-only member sent, say) is noted, not judged: the bare {"body"} above is the representation it takes.
 */
async function replaceInOwnShape(p: Probe, read: Exchange, current: string): Promise<string | undefined> {
  const rep = representationOf(read.res);
  const at = rep?.format === "json" ? findString(rep.value, current) : undefined;
  if (rep === undefined || at === undefined || at.length === 0) return undefined;
  const path = read.req.path;
  const replacement = uniqueBody("put-own");
  const body = JSON.stringify(withValueAt(rep.value, at, replacement));
  const put = await p.change({ method: "PUT", path, headers: { accept: JSON_TYPE, "content-type": JSON_TYPE }, body });
  if (put.res.status < 200 || put.res.status >= 300) {
    p.note(
      `PUT ${path} of the representation its GET shows, body changed, answered ${statusLine(put.res)}: the bare ` +
        `{"body"} is what it takes`,
    );
    return undefined;
  }
  const again = await p.get(path);
  const shown = p.bodyOf(again.res, replacement);
  if (again.res.status !== 200 || shown !== replacement) {
    p.problem(
      `PUT ${path} of its own representation (as its GET shows it, the body changed) answered ` +
        `${statusLine(put.res)}, but GET then shows ` +
        `${again.res.status === 200 ? `body ${JSON.stringify(shown)}` : statusLine(again.res)}, not ` +
        `${JSON.stringify(replacement)}: the replacement was not stored`,
      again,
    );
    return undefined;
  }
  return `PUT ${path} of its own representation → ${put.res.status}, GET shows the replacement`;
}
