// http.read.after-create: a created message is read back with GET on its own URI, with the body that was sent, every
// character of it: long bodies of characters beyond U+FFFF (a surrogate pair in UTF-16, four bytes in UTF-8) are read
// back as JSON and as XML, so that a server writing its reply in slices never cuts one in two (the reference's mutants
// of representation.ts:188-189, docs/mutation.md: a pair split where a piece of the reply ends, sent as two U+FFFD);
// a body of the characters JSON and XML escape (" \ < & > ' and a tab) is read back as both, so that a server that
// writes a body unescaped in either is seen (the reference's mutants of representation.ts:196-197). The links the
// message read carries are followed with GET: a link the server gives leads to a resource that answers, never to a
// 500, nor, where the link names GET as its method, to a 405 (the reference's mutants of routes.ts:545-549, its
// reply resource without its GET or failing in it), nor to a 200 that says it is JSON or XML and is not (routes.ts:551,
// its representation empty).
import {
  type FoundLink,
  isJsonType,
  isXmlType,
  linksOf,
  mediaTypeOf,
  parseJson,
  parseXml,
} from "./_internals/links.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, shownBody, uniqueBody, XML_TYPE } from "./_internals/representation.js";
import { MAX_LISTING_PAGES, toTargetPath } from "./_internals/uri.js";
import { illFormedXml } from "./_internals/xml-document.js";

export const readAfterCreate = httpCheck(
  {
    id: "http.read.after-create",
    title:
      "GET on a created message's URI answers 200 with the body that was sent, every character of it, as JSON and " +
      "(where XML is served) as XML; the links it carries, followed with GET, answer neither 500 nor (naming GET) " +
      "405 nor a 200 that is not the JSON or XML it says",
    severity: "MUST",
    spec: "§4.2 (method mapping: Read is GET; rule 9: one URI per resource), §1 principle 3 (JSON or XML)",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    const reached = await p.reach();
    p.allowRequests(REQUESTS_PER_COLLECTION * Math.max(1, reached.length));
    for (const { path: c } of reached) {
      const created = await p.createOrStop(c);
      const read = await p.get(created.uri.path);
      const body = p.bodyOf(read.res, created.body);
      if (read.res.status !== 200)
        p.problem(
          `GET ${created.uri.path} (from the ${created.uri.how}) answered ${statusLine(read.res)}, not 200`,
          read,
        );
      else if (body !== created.body)
        p.problem(
          `GET ${created.uri.path} shows ${shownBody(body)}, not the ${JSON.stringify(created.body)} that was created`,
          read,
        );
      else shown.push(`GET ${created.uri.path} (from the ${created.uri.how}) → 200 with the body sent`);
      if (read.res.status === 200) shown.push(await linksFollowed(p, read));
      shown.push(await astralRoundTrip(p, c));
      shown.push(await markupRoundTrip(p, c));
    }
    return shown.filter((s) => s !== "").join("; ");
  },
);

/**
 * An astral character and an ASCII unit, repeated: whichever UTF-16 unit or UTF-8 byte a server cuts its reply at,
 * one of the offsets below puts a character beyond U+FFFF across the cut (units: the pattern is 3 long, so offsets 0,
 * 1 and 2 put a low surrogate at every position mod 3; bytes: it is 5 long, a cut inside the 4 bytes of the astral
 * character at 3 of every 5 positions, and 3 consecutive offsets always reach one). The ASCII unit after each pair
 * matters: a cut that looks ahead for the next high surrogate keeps pairs whole in a run of astral characters only.
 */
const ASTRAL_PATTERN = "\u{1F600}a";
/** 66,000 bytes of UTF-8 (39,600 UTF-16 units): past 64 KiB, the largest chunk Node's streams hand on by default. */
const ASTRAL_REPEATS = 13_200;
const ASTRAL_OFFSETS = [0, 1, 2] as const;
const ASTRAL_NAMED = `${ASTRAL_REPEATS} × U+1F600 (each followed by "a")`;
/**
 * The characters JSON must escape in a string (`"`, `\\`, a tab: RFC 8259 §7) and XML in text (`<`, `&`, and `>`
 * after `]]`: XML 1.0 §2.4), with `'` and `/`, which either may escape or not: the body as written by a server
 * that escapes none of them is no JSON, or no well-formed XML, or another body.
 */
const MARKUP_BODY = `say "hi" \\ <b>&amp;</b> ]]> 'x'\t/ `;
const MARKUP_NAMED = "characters JSON and XML escape (\" \\ < & > ' and a tab)";
/** Links of a message followed at most: a message's own are a handful (the reference's five, three of them GET). */
const MAX_FOLLOWED = 6;

/**
 * Requests a collection may take, at most: five messages created, each perhaps looked for in a listing of
 * MAX_LISTING_PAGES pages when the answer does not locate it, one read of the first and two of each other one, and
 * the first one's links followed.
 */
const REQUESTS_PER_COLLECTION =
  (2 + ASTRAL_OFFSETS.length) * (1 + MAX_LISTING_PAGES) + 3 + 2 * ASTRAL_OFFSETS.length + MAX_FOLLOWED;

/**
 * Creates messages of long astral bodies, one per offset, and reads each back as JSON and as XML: the body shown is
 * the body sent, code point for code point. A create refused (4xx: a size limit, part 8 shows none) is not judged;
 * XML answered 406, or JSON in its place (Accept disregarded, RFC 9110 §12.5.1), is legal.
 */
async function astralRoundTrip(p: Probe, c: string): Promise<string> {
  const bodies = ASTRAL_OFFSETS.map(
    (k) => "b".repeat(k) + ASTRAL_PATTERN.repeat(ASTRAL_REPEATS) + uniqueBody("astral"),
  );
  const created = await p.all(bodies.map((body) => () => p.create(c, body)));
  const located: { path: string; body: string }[] = [];
  const seen: string[] = [];
  for (const { ex, uri, body } of created) {
    const sent = `${ex.req.method} ${ex.req.path} of a body of ${ASTRAL_NAMED}`;
    if (ex.res.status >= 400 && ex.res.status < 500) seen.push(`${sent} → ${ex.res.status} (refused, not judged)`);
    else if (ex.res.status < 200 || ex.res.status >= 300)
      p.problem(`${sent} answered ${statusLine(ex.res)}, neither a 2xx nor a 4xx refusal`, ex);
    else if (uri === undefined) seen.push(`${sent} → ${ex.res.status}, not found again to read`);
    else located.push({ path: uri.path, body });
  }
  const reads = await p.all(
    located.flatMap(({ path }) => [JSON_TYPE, XML_TYPE].map((accept) => () => p.get(path, { accept }))),
  );
  let whole = 0;
  located.forEach(({ body }, i) => {
    const json = reads[2 * i] as Exchange;
    const xml = reads[2 * i + 1] as Exchange;
    if (readWhole(p, json, body, "json", ASTRAL_NAMED) && readWhole(p, xml, body, "xml", ASTRAL_NAMED)) whole++;
  });
  if (located.length > 0) seen.push(`${whole} of ${located.length} bodies of ${ASTRAL_NAMED} read back whole`);
  return seen.join("; ");
}

/**
 * Follows with GET the links on the target that the message read carries (its body's and its Link header's), but
 * those that name another method and the message itself: a 500 is a server error on a resource the server linked
 * to; a 405 to a link that names GET is a transition the server offers and does not serve (RFC 9110 §15.5.6). Any
 * 200 that says it is JSON or XML must be that (an empty body is neither: the reference's mutants of routes.ts:551).
 * Any other answer is legal here (a 406 for a link to another format, a 404 for a resource that comes and goes).
 */
async function linksFollowed(p: Probe, read: Exchange): Promise<string> {
  const links = new Map<string, FoundLink>();
  for (const link of linksOf(read.res)) {
    if (link.from === "Location header" || (link.method !== undefined && link.method.toUpperCase() !== "GET")) continue;
    const path = toTargetPath(link.href, p.target.baseUrl, read.req.path, true);
    if (path === undefined || path === read.req.path) continue;
    // The same target in the Link header and in the body: the one that names its method says more.
    if (links.has(path)) {
      if (link.method !== undefined) links.set(path, link);
      continue;
    }
    if (links.size < MAX_FOLLOWED) links.set(path, link);
  }
  const paths = [...links.keys()];
  const followed = await p.all(paths.map((path) => () => p.get(path)));
  let served = 0;
  followed.forEach((ex, i) => {
    const link = links.get(paths[i] as string) as FoundLink;
    const named = `the ${link.rel === undefined ? "link" : `${JSON.stringify(link.rel)} link`} of ${read.req.path}`;
    if (ex.res.status === 500)
      p.problem(`GET ${ex.req.path} (${named}) answered ${statusLine(ex.res)}: a server error on its own link`, ex);
    else if (ex.res.status === 200 && unparsed(ex) !== undefined)
      p.problem(
        `GET ${ex.req.path} (${named}) answered 200 with ${unparsed(ex)}, where its Content-Type says it is ` +
          "a representation in that format",
        ex,
      );
    else if (ex.res.status === 405 && link.method !== undefined)
      p.problem(
        `GET ${ex.req.path} (${named}, which names GET) answered ${statusLine(ex.res)}: the server links to a ` +
          "transition it does not serve",
        ex,
      );
    else served++;
  });
  return paths.length === 0 ? "" : `${served} of ${paths.length} links of the message followed with GET, answered`;
}

/** What is wrong with a reply that says it is JSON or XML and is not (an empty body is neither), if anything. */
function unparsed(ex: Exchange): string | undefined {
  const type = mediaTypeOf(ex.res);
  const size = ex.res.text === "" ? "an empty body" : `${Buffer.byteLength(ex.res.text)} bytes`;
  if (isJsonType(type) && !parseJson(ex.res.text).ok) return `${size} that is no JSON (RFC 8259 §2)`;
  if (isXmlType(type) && (illFormedXml(ex) !== undefined || !parseXml(ex.res.text).ok))
    return `${size} that is no well-formed XML (XML 1.0 §2.1)`;
  return undefined;
}

/**
 * Creates a message whose body holds the characters JSON and XML escape, and reads it back as JSON and as XML: the
 * body shown is the body sent. A create refused (4xx) is not judged; XML answered 406, or JSON in its place, is legal.
 */
async function markupRoundTrip(p: Probe, c: string): Promise<string> {
  const body = MARKUP_BODY + uniqueBody("markup");
  const { ex, uri } = await p.create(c, body);
  const sent = `${ex.req.method} ${ex.req.path} of a body of ${MARKUP_NAMED}`;
  if (ex.res.status >= 400 && ex.res.status < 500) return `${sent} → ${ex.res.status} (refused, not judged)`;
  if (ex.res.status < 200 || ex.res.status >= 300) {
    p.problem(`${sent} answered ${statusLine(ex.res)}, neither a 2xx nor a 4xx refusal`, ex);
    return "";
  }
  if (uri === undefined) return `${sent} → ${ex.res.status}, not found again to read`;
  const [json, xml] = (await p.all([JSON_TYPE, XML_TYPE].map((accept) => () => p.get(uri.path, { accept })))) as [
    Exchange,
    Exchange,
  ];
  const jsonWhole = readWhole(p, json, body, "json", MARKUP_NAMED);
  const xmlWhole = readWhole(p, xml, body, "xml", MARKUP_NAMED);
  return jsonWhole && xmlWhole ? `a body of ${MARKUP_NAMED} read back whole` : "";
}

/**
 * Judges one read of a message whose body is `body` (described as `named`): true when it shows it whole (or, as XML,
 * legally does not).
 */
function readWhole(p: Probe, ex: Exchange, body: string, asked: "json" | "xml", named: string): boolean {
  const type = mediaTypeOf(ex.res);
  const get = `GET ${ex.req.path} with Accept: ${asked === "json" ? JSON_TYPE : XML_TYPE}`;
  if (asked === "xml" && ex.res.status === 406) return true;
  if (ex.res.status !== 200) {
    p.problem(`${get} answered ${statusLine(ex.res)}, not 200, for a message whose body is ${named}`, ex);
    return false;
  }
  let shown: string | undefined;
  if (isJsonType(type)) {
    if (!parseJson(ex.res.text).ok) {
      p.problem(`${get} answered JSON that does not parse (RFC 8259), for a message whose body is ${named}`, ex);
      return false;
    }
    shown = p.bodyOf(ex.res, body);
  } else if (isXmlType(type)) {
    const ill = illFormedXml(ex);
    if (ill !== undefined) {
      p.problem(`${get} answered XML that is not well formed: ${ill}`, ex);
      return false;
    }
    const decoded = parseXml(ex.res.text, true);
    if (!decoded.ok) {
      p.problem(`${get} answered XML that does not parse, for a message whose body is ${named}`, ex);
      return false;
    }
    shown = p.bodyOf(ex.res, body, { format: "xml", value: decoded.value });
  } else {
    p.problem(`${get} answered 200 with Content-Type ${type || "(none)"}, neither JSON nor XML`, ex);
    return false;
  }
  if (shown === body) return true;
  p.problem(`${get} shows ${differenceFrom(shown, body)}`, ex);
  return false;
}

/** Where the body shown first differs from the body sent, by code point. */
function differenceFrom(shown: string | undefined, sent: string): string {
  if (shown === undefined) return "no body";
  const a = [...shown];
  const b = [...sent];
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const at = (cs: string[]) => (i < cs.length ? `U+${hex(cs[i] as string)}` : "the end");
  const astral = /[\u{10000}-\u{10FFFF}]/u.test(sent)
    ? "; a character beyond U+FFFF is one character, whatever pieces a reply is written in"
    : "";
  return (
    `another body than the ${b.length} code points sent: from code point ${i}, ${at(a)} where ${at(b)} was ` +
    `sent (${a.length} code points shown)${astral}`
  );
}

const hex = (c: string): string => (c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
