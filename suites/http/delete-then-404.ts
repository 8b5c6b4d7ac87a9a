// http.delete.then-404: DELETE removes a message: a GET afterwards answers 404 or 410, and the listing drops it.
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import type { Listed } from "./_internals/uri.js";

export const deleteThen404 = httpCheck(
  {
    id: "http.delete.then-404",
    title:
      "DELETE on a message's URI answers 2xx, GET then answers 404 (or 410), and the collection's listing no " +
      "longer shows it",
    severity: "MUST",
    spec: "§4.2 (method mapping: Delete is DELETE on the resource path) and §7",
  },
  async (p) => {
    const shown: string[] = [];
    const refused: string[] = [];
    for (const { path: c } of await p.reach()) {
      const created = await p.createOrStop(c);
      // The listing is read before and after: a paged one is followed within a bound, and a message not found
      // there before the DELETE leaves the listing unjudged rather than failed.
      const before = await p.findListed(c, created.body);
      const del = await p.remove(created.uri.path);
      // A resource that does not offer deletion says so (405 with Allow, 501): nothing to judge there.
      const notOffered = p.notOffered("delete", del);
      if (notOffered !== undefined) {
        refused.push(notOffered);
        continue;
      }
      if (del.res.status < 200 || del.res.status >= 300) {
        p.problem(`DELETE ${created.uri.path} answered ${statusLine(del.res)}, not a 2xx`, del);
        continue;
      }
      // Both reads come after the DELETE and neither reads what the other did: side by side (the listing only when
      // the message was listed before, and judged only when the GET says it is gone).
      const path = created.uri.path;
      const [read, listed] = (await p.all<Exchange | Listed | undefined>([
        () => p.get(path),
        async () => (before.present ? p.findListed(c, created.body) : undefined),
      ])) as [Exchange, Listed | undefined];
      if (read.res.status !== 404 && read.res.status !== 410) {
        p.problem(
          `after DELETE ${created.uri.path} answered ${del.res.status}, GET answers ${statusLine(read.res)}, not ` +
            `404 or 410`,
          read,
        );
        continue;
      }
      p.deleted(created.uri.path);
      if (!before.present) {
        p.note(
          `the message was not found in ${before.pages} page(s) of ${c} before the DELETE: the listing could not ` +
            `be confirmed`,
        );
        shown.push(`DELETE ${created.uri.path} → ${del.res.status}, then GET → ${read.res.status}`);
        continue;
      }
      judgeListingAfter(p, c, listed as Listed, { path, status: del.res.status }, read, shown);
    }
    if (shown.length === 0 && refused.length > 0 && p.problems.length === 0)
      p.skip(`not applicable: no resource reached offers deletion (${refused.join("; ")})`);
    return [...shown, ...refused.map((r) => `not offered: ${r}`)].join("; ");
  },
);

/** The listing after a DELETE the GET confirmed: it must no longer show the message, once read to its end. */
function judgeListingAfter(
  p: Probe,
  c: string,
  after: Listed,
  del: { path: string; status: number },
  read: Exchange,
  shown: string[],
): void {
  if (after.present && after.last)
    p.problem(
      `after DELETE ${del.path} answered ${del.status} and GET ${read.res.status}, ` +
        `${after.last.req.path} still lists the message`,
      after.last,
    );
  else if (!after.complete) {
    // The DELETE and the GET were judged all the same: only the listing is left unconfirmed.
    p.note(
      `the listing of ${c} was not read to its end after the DELETE (${after.pages} page(s)): its absence ` +
        `there is not confirmed`,
    );
    shown.push(`DELETE ${del.path} → ${del.status}, then GET → ${read.res.status}, the listing not read to its end`);
  } else shown.push(`DELETE ${del.path} → ${del.status}, then GET → ${read.res.status}, and ${c} no longer lists it`);
}
