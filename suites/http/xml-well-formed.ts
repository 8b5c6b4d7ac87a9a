// http.xml.well-formed: XML is exchanged as XML 1.0 defines it. A request in XML that is not UTF-8 is refused (a
// fatal error, XML 1.0 §4.3.3), and a reply in XML is a well-formed document in its encoding (§2.1, §2.2: only
// Char, in text and in character references) that carries the stored body exactly. A body XML cannot carry (U+0001
// and U+FFFF: outside Char in XML 1.0 and 1.1 alike) leaves a server legal answers the spec does not choose between:
// refuse the create (4xx), answer the XML read 406 (JSON only), or disregard Accept and answer JSON (RFC 9110
// §12.5.1). Found by mutation testing (representation.ts:260 and :422, docs/mutation.md). And XML a server takes is
// read as XML reads it: a body written as text, a CDATA section and a character reference is the one text they
// make (§2.4, §2.7, §4.1), stored whole (representation.ts:412 and :415: the pieces joined wrongly).
import { isJsonType, isXmlType, mediaTypeOf, parseJson } from "./_internals/links.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, uniqueBody, XML_TYPE } from "./_internals/representation.js";
import { locate } from "./_internals/uri.js";
import { illFormedXml } from "./_internals/xml-document.js";

/** Two characters no XML document can hold, raw or as a character reference. */
const UNCARRIED = " \u0001 \uFFFF";
const UNCARRIED_NAMED = "U+0001 and U+FFFF";
/** C3 28 is a lead byte followed by no continuation, FF is never UTF-8: no decoder may read them as text. */
const NOT_UTF8 = [0xc3, 0x28, 0xff];

export const xmlWellFormed = httpCheck(
  {
    id: "http.xml.well-formed",
    title:
      "a POST of XML that is not UTF-8 gets a 4xx, and a message whose body XML cannot carry is refused (4xx), " +
      "read as XML 406 or as JSON, never as ill-formed XML or XML showing another body; XML taken is read whole " +
      "(text, CDATA and character references are one text)",
    severity: "MUST",
    spec:
      "§1 principle 3 (data is exchanged as JSON or XML) and XML 1.0 §2.2 (Char), §4.1, §4.3.3 (encoding errors " +
      "are fatal)",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const { path: c } of await p.reach()) {
      shown.push(await notUtf8(p, c));
      shown.push(await uncarried(p, c));
      shown.push(await splitText(p, c));
    }
    return shown.filter((s) => s !== "").join("; ");
  },
);

/** POSTs (or PUTs, in a store) an XML message with bytes that are not UTF-8 under a UTF-8 declaration. */
async function notUtf8(p: Probe, c: string): Promise<string> {
  const { method, path } = await p.creationRequest(c);
  const head = `<?xml version="1.0" encoding="UTF-8"?><message><body>${uniqueBody("xml-bytes")} `;
  const body = Buffer.concat([Buffer.from(head), Buffer.from(NOT_UTF8), Buffer.from("</body></message>")]);
  const ex = await p.send({ method, path, headers: { accept: JSON_TYPE, "content-type": XML_TYPE }, body });
  p.track(c, ex);
  const { status } = ex.res;
  const sent = `${method} ${path} with XML holding bytes C3 28 FF, not UTF-8`;
  if (status >= 400 && status < 500) return `${sent} → ${status}`;
  const why =
    status >= 200 && status < 300
      ? ": a document not in its encoding is a fatal error (XML 1.0 §4.3.3), no message to store"
      : ", not a 4xx";
  p.problem(`${sent} answered ${statusLine(ex.res)}${why}`, ex);
  return "";
}

/**
 * One body written as three pieces of XML character data: text, a CDATA section (§2.7) and a character reference
 * (§4.1). An XML reader joins them into the one text it holds (§2.4).
 */
const SPLIT = { xml: " <![CDATA[a<b]]> &#x26; c", text: " a<b & c" };

/**
 * POSTs (or PUTs, in a store) an XML message whose body is split into several text nodes, and reads it back as JSON:
 * where the server takes it (2xx), the body read is the text sent, whole. A refusal (4xx) is not judged: the spec
 * shows no XML shape for a request, and a server may take JSON only; any other answer is a problem.
 */
async function splitText(p: Probe, c: string): Promise<string> {
  const { method, path } = await p.creationRequest(c);
  const head = uniqueBody("xml-split");
  const body = head + SPLIT.text;
  const xml = `<?xml version="1.0" encoding="UTF-8"?><message><body>${head}${SPLIT.xml}</body></message>`;
  const ex = await p.send({ method, path, headers: { accept: JSON_TYPE, "content-type": XML_TYPE }, body: xml });
  p.track(c, ex);
  const sent = `${method} ${path} with XML whose <body> is text, a CDATA section and a character reference`;
  if (ex.res.status >= 400 && ex.res.status < 500) return `${sent} → ${ex.res.status} (not taken, not judged)`;
  if (ex.res.status < 200 || ex.res.status >= 300) {
    p.problem(`${sent} answered ${statusLine(ex.res)}, neither a 2xx nor a 4xx refusal`, ex);
    return "";
  }
  const uri =
    locate(c, ex, p.target.baseUrl) ?? (method === "PUT" ? { path, how: "PUT" } : (await p.findListed(c, body)).found);
  if (uri === undefined) return `${sent} → ${ex.res.status}, not found again to read (no Location, id or listed link)`;
  p.own(uri.path);
  const read = await p.get(uri.path, { accept: JSON_TYPE });
  if (read.res.status !== 200 || !isJsonType(mediaTypeOf(read.res)))
    return `${sent} → ${ex.res.status}, read as JSON → ${read.res.status}`;
  const shown = p.bodyOf(read.res, body);
  if (shown === body) return `${sent} → ${ex.res.status}, read back whole`;
  p.problem(
    `${sent} answered ${ex.res.status}, and GET ${uri.path} shows ` +
      `${shown === undefined ? "no body" : `a body of ${shown.length} characters where ${body.length} were sent`}: ` +
      "XML's character data is one text however it is written (XML 1.0 §2.4, §2.7, §4.1), and the body stored is " +
      "the text sent",
    read,
  );
  return "";
}

/** Creates a message whose body XML cannot carry and reads it back as JSON and as XML. */
async function uncarried(p: Probe, c: string): Promise<string> {
  const body = uniqueBody("xml-chars") + UNCARRIED;
  const created = await p.create(c, body);
  const { ex, uri } = created;
  const sent = `${ex.req.method} ${ex.req.path} of a body holding ${UNCARRIED_NAMED}`;
  if (ex.res.status >= 400 && ex.res.status < 500) return `${sent} → ${ex.res.status} (refused)`;
  if (ex.res.status < 200 || ex.res.status >= 300) {
    p.problem(`${sent} answered ${statusLine(ex.res)}, neither a 2xx nor a 4xx refusal`, ex);
    return "";
  }
  if (!uri) return `${sent} → ${ex.res.status}, not found again to read (no Location, id or listed link)`;
  const [json, xml] = (await p.all([JSON_TYPE, XML_TYPE].map((accept) => () => p.get(uri.path, { accept })))) as [
    Exchange,
    Exchange,
  ];
  if (json.res.status !== 200 || !isJsonType(mediaTypeOf(json.res)) || !parseJson(json.res.text).ok) {
    p.problem(
      `GET ${uri.path} with Accept: ${JSON_TYPE} answered ${statusLine(json.res)} with Content-Type ` +
        `${mediaTypeOf(json.res) || "(none)"}, not 200 and JSON`,
      json,
    );
  } else if (p.bodyOf(json.res, body) !== body) {
    p.problem(`GET ${uri.path} as JSON shows another body than the one created with ${UNCARRIED_NAMED}`, json);
  }
  const read = readAsXml(p, xml, body);
  return read === undefined ? "" : `${sent} → ${ex.res.status}, read as XML → ${read}`;
}

/**
 * Judges the read with Accept: application/xml of the message holding `body`: what it showed, or undefined after a
 * problem.
 */
function readAsXml(p: Probe, ex: Exchange, body: string): string | undefined {
  const type = mediaTypeOf(ex.res);
  const asked = `GET ${ex.req.path} with Accept: ${XML_TYPE}`;
  if (ex.res.status === 406) return "406";
  if (ex.res.status === 200 && isJsonType(type) && parseJson(ex.res.text).ok && p.bodyOf(ex.res, body) === body)
    return "JSON (Accept disregarded)";
  if (ex.res.status !== 200 || !isXmlType(type)) {
    p.problem(
      `${asked} answered ${statusLine(ex.res)} with Content-Type ${type || "(none)"}, not 406, XML, or JSON with ` +
        `the body`,
      ex,
    );
    return undefined;
  }
  const ill = illFormedXml(ex);
  if (ill !== undefined) {
    p.problem(
      `${asked} answered 200 with XML that is not well formed: ${ill}; XML cannot carry ${UNCARRIED_NAMED}: ` +
        `refuse the create or answer 406`,
      ex,
    );
    return undefined;
  }
  if (p.bodyOf(ex.res, body) === body) return "XML with the body";
  p.problem(
    `${asked} answered 200 with XML showing another body than the one stored (XML cannot carry ` +
      `${UNCARRIED_NAMED}: refuse the create or answer 406)`,
    ex,
  );
  return undefined;
}
