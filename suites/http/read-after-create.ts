// http.read.after-create: a created message is read back with GET on its own URI, with the body that was sent, every
// character of it: long bodies of characters beyond U+FFFF (a surrogate pair in UTF-16, four bytes in UTF-8) are read
// back as JSON and as XML, so that a server writing its reply in slices never cuts one in two (the reference's mutants
// of representation.ts:188-189, docs/mutation.md: a pair split where a piece of the reply ends, sent as two U+FFFD);
// a body of the characters JSON and XML escape (" \ < & > ' and a tab) is read back as both, so that a server that
// writes a body unescaped in either is seen (the reference's mutants of representation.ts:196-197).
import { isJsonType, isXmlType, mediaTypeOf, parseJson, parseXml } from "./_internals/links.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, shownBody, uniqueBody, XML_TYPE } from "./_internals/representation.js";
import { MAX_LISTING_PAGES } from "./_internals/uri.js";
import { illFormedXml } from "./_internals/xml-document.js";

export const readAfterCreate = httpCheck(
  {
    id: "http.read.after-create",
    title:
      "GET on a created message's URI answers 200 with the body that was sent, every character of it, as JSON and " +
      "(where XML is served) as XML",
    severity: "MUST",
    spec: "§4.2 (method mapping: Read is GET; rule 9: one URI per resource), §1 principle 3 (JSON or XML)",
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
/**
 * Requests a collection may take, at most: five messages created, each perhaps looked for in a listing of
 * MAX_LISTING_PAGES pages when the answer does not locate it, one read of the first and two of each other one.
 */
const REQUESTS_PER_COLLECTION = (2 + ASTRAL_OFFSETS.length) * (1 + MAX_LISTING_PAGES) + 3 + 2 * ASTRAL_OFFSETS.length;

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
