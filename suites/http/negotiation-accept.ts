// http.negotiation.accept: Accept chooses the representation: JSON, XML (or 406), and 406 for a type nobody serves;
// without Accept, any type is acceptable (RFC 9110 §12.5.1), so the message comes back as JSON or XML; and a list of
// weighted ranges that rates JSON well is read as a list, not refused.
import { isJsonType, isXmlType, mediaTypeOf, parseJson, parseXml } from "./_internals/links.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, shownBody, XML_TYPE } from "./_internals/representation.js";

/** No message representation is an image: a server that answers it with 2xx ignored Accept. */
const UNSUPPORTED = "image/png";

/**
 * Lists of weighted ranges (RFC 9110 §12.5.1, §12.4.2), each rating JSON at least 0.9, the second with a quoted
 * parameter holding a comma (§5.6.6: not a separator): JSON is acceptable in both, so 406 ("no acceptable
 * representation", §15.5.7) misreads the list. Found by mutation testing (negotiation.ts:36, docs/mutation.md).
 */
const LISTS = [
  "application/xml;q=0.5, application/json",
  'application/json;q=0.9, application/xml;q=0.8, text/plain;x="a,b";q=0.5',
] as const;

export const negotiationAccept = httpCheck(
  {
    id: "http.negotiation.accept",
    title:
      "Accept: application/json gets JSON, application/xml gets XML or 406, each carrying the message created, " +
      "an unsupported type gets 406, and no Accept or a weighted list that rates JSON well gets the message as " +
      "JSON or XML",
    severity: "MUST",
    spec: "§4.2 rule 8 and §1 principle 3",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const { path: c } of await p.reach()) {
      const created = await p.createOrStop(c);
      const path = created.uri.path;
      // Three reads of one message, none depending on another: sent side by side, judged in order.
      const [json, xml, other] = (await p.all(
        [JSON_TYPE, XML_TYPE, UNSUPPORTED].map((accept) => () => p.get(path, { accept })),
      )) as [Exchange, Exchange, Exchange];
      judgeJsonAndXml(p, path, created.body, json, xml, shown);
      if (other.res.status === 406) shown.push(`${UNSUPPORTED} → 406`);
      else
        p.problem(
          `GET ${path} with Accept: ${UNSUPPORTED} answered ${statusLine(other.res)}, not 406 Not Acceptable`,
          other,
        );
      // No Accept at all: any media type is acceptable (RFC 9110 §12.5.1), so one of the representations served.
      const none = await p.get(path, {});
      const got = representationShown(p, none, created.body);
      if (got !== undefined) shown.push(`no Accept → ${got}`);
      else
        p.problem(
          `GET ${path} without Accept answered ${statusLine(none.res)} with Content-Type ` +
            `${mediaTypeOf(none.res) || "(none)"}, not 200 with the message as JSON or XML (without Accept any ` +
            `type is acceptable, RFC 9110 §12.5.1)`,
          none,
        );
      let listsRead = true;
      for (const accept of LISTS) {
        const listed = await p.get(path, { accept });
        if (representationShown(p, listed, created.body) !== undefined) continue;
        listsRead = false;
        p.problem(
          `GET ${path} with Accept: ${accept} answered ${statusLine(listed.res)} with Content-Type ` +
            `${mediaTypeOf(listed.res) || "(none)"}, not 200 with the message as JSON or XML: the list rates JSON ` +
            `at least 0.9 (RFC 9110 §12.5.1; a comma in a quoted parameter separates nothing, §5.6.6)`,
          listed,
        );
      }
      if (listsRead) shown.push("weighted lists → JSON or XML");
    }
    return shown.join(", ");
  },
);

/** "JSON" or "XML" when the answer is 200 with the message in that representation, well formed; else undefined. */
function representationShown(p: Probe, ex: Exchange, body: string): "JSON" | "XML" | undefined {
  const type = mediaTypeOf(ex.res);
  const parsed = isJsonType(type) ? parseJson(ex.res.text).ok : isXmlType(type) && parseXml(ex.res.text).ok;
  if (ex.res.status !== 200 || !parsed || p.bodyOf(ex.res, body) !== body) return undefined;
  return isJsonType(type) ? "JSON" : "XML";
}

/** The JSON read must be 200 JSON carrying the message; the XML read 406, or 200 XML carrying it. */
function judgeJsonAndXml(p: Probe, path: string, body: string, json: Exchange, xml: Exchange, shown: string[]): void {
  if (json.res.status !== 200 || !isJsonType(mediaTypeOf(json.res)) || !parseJson(json.res.text).ok) {
    p.problem(
      `GET ${path} with Accept: ${JSON_TYPE} answered ${statusLine(json.res)} with Content-Type ` +
        `${mediaTypeOf(json.res) || "(none)"}, not 200 and JSON`,
      json,
    );
  } else if (p.bodyOf(json.res, body) !== body) {
    p.problem(
      `GET ${path} as JSON shows ${shownBody(p.bodyOf(json.res))}, not the ${JSON.stringify(body)} ` +
        `that was created`,
      json,
    );
  } else shown.push("JSON → JSON");
  if (xml.res.status === 406) shown.push("XML → 406");
  else if (xml.res.status === 200 && isXmlType(mediaTypeOf(xml.res)) && parseXml(xml.res.text).ok) {
    // Every representation is of the same message: one that parses but lacks what was created is no representation
    // of it.
    if (p.bodyOf(xml.res, body) === body) shown.push("XML → XML");
    else
      p.problem(
        `GET ${path} as XML shows ${shownBody(p.bodyOf(xml.res))}, not the ${JSON.stringify(body)} ` +
          `that was created`,
        xml,
      );
  } else
    p.problem(
      `GET ${path} with Accept: ${XML_TYPE} answered ${statusLine(xml.res)} with Content-Type ` +
        `${mediaTypeOf(xml.res) || "(none)"}, neither XML nor 406`,
      xml,
    );
}
