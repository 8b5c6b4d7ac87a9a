// http.get.no-payload: GET needs no body, and a filter the server offers goes in the query and selects what it names.
import { discovery } from "./_internals/discovery.js";
import { idsOf, itemsOf, linksOf, representationOf } from "./_internals/links.js";
import { type Created, type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, uniqueBody } from "./_internals/representation.js";
import { readListing, toTargetPath, type Located } from "./_internals/uri.js";

/** Tried when the server offers no filter: judged only if it does filter, since no filter is required to exist. */
const GUESS = "body";

export const getNoPayload = httpCheck(
  {
    id: "http.get.no-payload",
    title:
      "GET without a body reads a collection and a message, a body sent with GET filters nothing (it may be " +
      "ignored or refused), and a query filter the server offers (--filter, the OpenAPI document, a URI template " +
      "in its links) selects what it names",
    severity: "MUST",
    spec: "§4.2 rule 11",
  },
  async (p) => {
    const shown: string[] = [];
    for (const { path: c } of await p.reach()) {
      // Two messages, neither depending on the other, created side by side; then the two reads, side by side.
      const made = await p.all([
        () => p.createOrStop(c, uniqueBody("filter-a")),
        () => p.createOrStop(c, uniqueBody("filter-b")),
      ]);
      const [a, b] = [made[0]!, made[1]!];
      const [doc, all] = (await p.all([() => p.get(a.uri.path), () => p.get(c)])) as [Exchange, Exchange];
      if (doc.res.status !== 200)
        p.problem(`GET ${a.uri.path} with no body answered ${statusLine(doc.res)}, not 200`, doc);
      if (all.res.status !== 200) {
        p.problem(`GET ${c} with no body answered ${statusLine(all.res)}, not 200`, all);
        continue;
      }
      // Rule 11 says where filters go, not which exist: only one the server offers (or the user names) is judged.
      const offered = await filtersOf(p, c);
      const names = offered.length > 0 ? offered : [GUESS];
      for (const name of names) await bodyNotFilter(p, c, name, a, b, all);
      for (const name of names) {
        const filter = `${c}?${encodeURIComponent(name)}=${encodeURIComponent(a.body)}`;
        const filtered = await p.get(filter);
        // A first page is not the listing: b may be on a later one (a listing oldest first, with messages before the
        // run).
        const later =
          filtered.res.status === 200 &&
          lists(p, c, filtered, a) &&
          !lists(p, c, filtered, b) &&
          (await onLaterPage(p, c, filtered, b));
        const shows = (m: Listable) => lists(p, c, filtered, m) || (m === b && later);
        const selects = filtered.res.status === 200 && shows(a) && !shows(b);
        if (offered.length === 0) {
          shown.push(`GET ${c} and GET ${a.uri.path} need no body`);
          p.note(
            selects
              ? `?${name}= selects one of two new messages`
              : `no filter offered (none named with --filter or in a URI template), and ?${name}= does not filter: ` +
                  `the filter part of rule 11 is not judged`,
          );
          continue;
        }
        if (filtered.res.status !== 200)
          p.problem(
            `GET ${filter} answered ${statusLine(filtered.res)}: the offered filter ${name} does not work in the query`,
            filtered,
          );
        else if (!shows(a)) p.problem(`GET ${filter} leaves out the message whose body it names`, filtered);
        else if (shows(b))
          p.problem(
            `GET ${filter} also lists a message with another body${later ? " (on a later page)" : ""}: the ` +
              `filter changed nothing`,
            filtered,
          );
        else shown.push(`GET ${c} and GET ${a.uri.path} need no body; ?${name}= selects one of two new messages`);
      }
    }
    return shown.join("; ");
  },
);

/**
 * A GET carries no payload (rule 11): a server may ignore a body sent with GET or refuse it (4xx), but a body that
 * changes the reply carries a filter where the query should. Judged only when it does: the listing with a filter in
 * its body shows the message it names and not the other, where the same listing without a body does not.
 */
async function bodyNotFilter(
  p: Probe,
  c: string,
  name: string,
  wanted: Listable,
  other: Listable,
  plain: Exchange,
): Promise<void> {
  const withBody = await p.get(
    c,
    { accept: JSON_TYPE, "content-type": JSON_TYPE },
    { body: JSON.stringify({ [name]: wanted.body }) },
  );
  const { status } = withBody.res;
  if (status >= 400 && status < 500) {
    p.note(`GET ${c} with a body is refused (${status})`);
    return;
  }
  const narrowed = (ex: Exchange) => lists(p, c, ex, wanted) && !lists(p, c, ex, other);
  // A paged listing may show one new message and not the other on its first page by chance: fewer items than the
  // same page without a body says the body selected them all the same.
  const shown = (ex: Exchange) => {
    const rep = representationOf(ex.res);
    return rep ? itemsOf(rep.value).length : 0;
  };
  if (status === 200 && narrowed(withBody) && (!narrowed(plain) || shown(withBody) < shown(plain))) {
    p.problem(
      `GET ${c} with the body {"${name}": ...} lists the message it names and not another new one ` +
        `(${shown(withBody)} item(s), where the same GET without a body shows ` +
        `${shown(plain)}${narrowed(plain) ? "" : " and both messages or neither"}): the server reads a filter from ` +
        `the GET's body, where rule 11 puts it in the query`,
      withBody,
    );
  }
}

type Listable = Pick<Created, "body"> & { uri: Located };

/** Whether a page after this one of a listing (its rel="next", within readListing's bound) shows the message. */
async function onLaterPage(p: Probe, c: string, first: Exchange, m: Listable): Promise<boolean> {
  const next = linksOf(first.res).find((l) => l.rel?.toLowerCase() === "next");
  const path = next === undefined ? undefined : toTargetPath(next.href, p.target.baseUrl, first.req.path, true);
  if (path === undefined) return false;
  let seen = false;
  await readListing(
    (q) => p.get(q),
    path,
    p.target.baseUrl,
    (_value, _page, ex) => (seen = lists(p, c, ex, m)),
  );
  return seen;
}

/**
 * Whether a page of a listing shows a message: its body (not within a link, which may repeat the filter's query),
 * or (a listing of summaries, which need not show bodies) a link or an id that names the message's URI.
 */
function lists(p: Probe, c: string, ex: Exchange, m: Listable): boolean {
  // The body outside the page's links: a self link that repeats the query (?body=...) shows no message.
  const links = linksOf(ex.res);
  if (links.reduce((text, l) => text.split(l.href).join(""), ex.res.text).includes(m.body)) return true;
  const linked = links.map((l) => toTargetPath(l.href, p.target.baseUrl, c)?.replace(/[?#].*$/, ""));
  const rep = representationOf(ex.res);
  const ids = rep ? [...idsOf(rep.value)].map((id) => `${c}/${encodeURIComponent(id)}`) : [];
  return [...linked, ...ids].includes(m.uri.path);
}

/**
 * Filters of a collection: those the user named, the query parameters the OpenAPI document gives its GET, and the
 * variables of URI templates ({?a,b}) the server links to it with.
 */
async function filtersOf(p: Probe, collection: string): Promise<string[]> {
  const names = new Set(p.config.filters ?? []);
  const found = await discovery(p.ctx);
  for (const name of found.queryParameters.get(collection) ?? []) names.add(name);
  for (const { on, link } of found.links) {
    const template = /\{\?([^}]*)\}/.exec(link.href);
    if (!template || toTargetPath(link.href, p.target.baseUrl, on) !== collection) continue;
    for (const v of (template[1] as string).split(",")) if (/^[A-Za-z0-9_.-]+$/.test(v.trim())) names.add(v.trim());
  }
  return [...names];
}
