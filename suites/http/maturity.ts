// http.maturity: the Richardson level the interface reaches (0 to 3), with its evidence; level 2 is the bar.
import { fail, pass } from "../../harness/check.js";
import { linksOf, type FoundLink } from "./_internals/links.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { uniqueBody } from "./_internals/representation.js";
import { toTargetPath } from "./_internals/uri.js";

const LEVEL_NAMES = ["HTTP used", "individual resources", "HTTP API", "REST API"];

export const maturity = httpCheck(
  {
    id: "http.maturity",
    title:
      "the interface reaches level 2 (an HTTP API: the appropriate methods and exact status codes); level 3 " +
      "(hypermedia) is noted",
    severity: "MUST",
    spec: "§4.2 (resource-interface maturity levels: level 2 is sufficient)",
    independent: true,
  },
  async (p) => {
    const c = p.collections[0] as string;
    const evidence: string[] = [];
    const short: string[] = [];
    const shortBy: Exchange[] = [];
    const verdict = (level: number) => {
      const text =
        `level ${level} (${LEVEL_NAMES[level]})${short.length ? `, short of the next: ${short.join("; ")}` : ""}. ` +
        `Evidence: ${evidence.join("; ")}`;
      const details = [...short, ...shortBy.map((ex) => `reproduce: ${p.target.curl(ex.req)}`)];
      return level >= 2 ? pass(text) : fail(text, { details });
    };

    const list = await p.get(c);
    if (list.res.failure) {
      p.problem(`GET ${c} got ${statusLine(list.res)}: not even level 0`, list);
      return "";
    }
    evidence.push(`GET ${c} → ${list.res.status}`);
    // Level 1: each resource has its own URI, named by a noun, with its details in the response body.
    const created = await p.create(c);
    evidence.push(`${created.ex.req.method} ${created.ex.req.path} → ${created.ex.res.status}`);
    const ok = created.ex.res.status >= 200 && created.ex.res.status < 300;
    if (ok && !created.uri)
      p.skip(
        `POST ${c} answered ${statusLine(created.ex.res)}, but neither the answer nor the listing (within its ` +
          `page bound) says where the message is: its level cannot be judged`,
      );
    if (list.res.status !== 200 || !created.uri) {
      short.push(
        !created.uri
          ? `no URI for a created message (POST answered ${statusLine(created.ex.res)})`
          : `GET ${c} answered ${statusLine(list.res)}`,
      );
      shortBy.push(created.uri ? list : created.ex);
      return verdict(0);
    }
    // Two reads side by side, neither depending on the other (the unknown id's judged only when level 1 holds).
    const [read, unknown] = (await p.all(
      [created.uri.path, `${c}/${uniqueBody("no-such-id")}`].map((path) => () => p.get(path)),
    )) as [Exchange, Exchange];
    evidence.push(`GET ${created.uri.path} → ${read.res.status}`);
    if (read.res.status !== 200 || p.bodyOf(read.res, created.body) !== created.body) {
      short.push(readShortfall(read, created.uri.path, created.body));
      shortBy.push(read);
      return verdict(0);
    }
    // Level 2: the method says what to do and the status code says what happened.
    const level2 = await level2Shortfalls(p, created.ex, created.uri.path, unknown, evidence, shortBy);
    // Level 3: representations (or their Link headers) carry the URIs of related resources and next transitions.
    const links = [...hypermedia(p, read.res, created.uri.path), ...hypermedia(p, list.res, c)];
    const rels = [...new Set(links.map((l) => (l.rel ? `${l.rel} ${l.href}` : l.href)))].slice(0, 6);
    if (level2.length > 0) {
      short.push(...level2);
      return verdict(1);
    }
    if (links.length === 0) {
      short.push(
        "no links in the representations of the collection or of a message (JSON links/_links/href, XML href, " +
          "Link header)",
      );
      return verdict(2);
    }
    evidence.push(`links: ${rels.join(", ")}`);
    return verdict(3);
  },
);

/** Links on the target's own origin, other than Location (which level 2 already uses). */
function hypermedia(p: Probe, res: Parameters<typeof linksOf>[0], on: string): FoundLink[] {
  const baseUrl = p.target.baseUrl;
  return linksOf(res).filter((l) => l.from !== "Location header" && toTargetPath(l.href, baseUrl, on) !== undefined);
}

/** Where the interface falls short of level 2 (methods and exact status codes), with the exchanges that show it. */
async function level2Shortfalls(
  p: Probe,
  creation: Exchange,
  path: string,
  unknown: Exchange,
  evidence: string[],
  shortBy: Exchange[],
): Promise<string[]> {
  const level2: string[] = [];
  if (creation.res.status !== 201) {
    level2.push(`a creating ${creation.req.method} answered ${statusLine(creation.res)}, not 201`);
    shortBy.push(creation);
  }
  // The exact code is one whose meaning fits (RFC 9110): 404 or 410 for an absent id, 400 for one that cannot be an
  // id.
  if (![400, 404, 410].includes(unknown.res.status)) {
    level2.push(
      `an unknown id answered ${statusLine(unknown.res)}, not 404 (or 410, or 400 for an id that cannot be one)`,
    );
    shortBy.push(unknown);
  }
  const del = await p.remove(path);
  const [refusedDelete, after] = [p.notOffered("delete", del), await p.get(path)];
  evidence.push(`DELETE → ${del.res.status}, then GET → ${after.res.status}`);
  if (after.res.status === 404 || after.res.status === 410) p.deleted(path);
  // A message that does not offer deletion (405 with Allow, 501) answers with the exact code for that.
  if (
    refusedDelete === undefined &&
    (del.res.status < 200 || del.res.status >= 300 || (after.res.status !== 404 && after.res.status !== 410))
  ) {
    level2.push(`DELETE answered ${statusLine(del.res)} and a GET afterwards ${statusLine(after.res)}`);
    shortBy.push(del, after);
  }
  return level2;
}

/** What a read of a message just created lacks: the status, or (with a 200) the body sent. */
function readShortfall(read: Exchange, path: string, body: string): string {
  return read.res.status !== 200
    ? `GET ${path} answered ${statusLine(read.res)}, not 200`
    : `GET ${path} answered 200, but its representation does not show the body sent (${JSON.stringify(body)})`;
}
