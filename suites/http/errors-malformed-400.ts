// http.errors.malformed-400: a malformed representation gets 400 (a 4xx at least), never a 5xx or a 2xx.
import { httpCheck, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, XML_TYPE } from "./_internals/representation.js";

/** Representations cut off in the middle: malformed in any parser, whatever the resource's fields. */
const MALFORMED: readonly [string, string, string][] = [
  ["JSON", JSON_TYPE, '{"body": "conformance'],
  // A server that reads no XML answers 415; one that does must not let its parser's failure become a 5xx.
  ["XML", XML_TYPE, "<message><body>conformance</message"],
  // Cut off after the last child: a lenient parser closes the root itself and stores the message, where an XML
  // processor must report the fatal error (XML 1.0 §1.2, §2.1: a document is one element, its end tag included).
  // Found by mutation testing: the reference's parse without its validation (representation.ts:356, docs/mutation.md).
  ["XML whose root element is never closed", XML_TYPE, "<message><body>conformance</body>"],
  // Beside the root a document holds only comments, processing instructions and white space (XML 1.0 §2.1, §2.8):
  // a CDATA section or a character reference there is a fatal error, which a parser that skips it lets through.
  // Found by mutation testing: the reference's filter of the nodes beside its root (representation.ts:360).
  ["XML with a CDATA section before the root", XML_TYPE, "<![CDATA[x]]><message><body>conformance</body></message>"],
  ["XML with a character reference after the root", XML_TYPE, "<message><body>conformance</body></message>&#10;"],
];

export const errorsMalformed400 = httpCheck(
  {
    id: "http.errors.malformed-400",
    title:
      "a POST with malformed JSON, or malformed XML, gets 400 Bad Request (a 4xx: 415 when XML is not read), " +
      "never a 5xx",
    severity: "MUST",
    spec:
      "§7 (4xx: the client's request was wrong; 5xx: a server-side error), XML 1.0 §1.2 (fatal errors), §2.1 and " +
      "§2.8 (nothing but comments, PIs and white space beside the root)",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      for (const [name, type, text] of MALFORMED) {
        const ex = await p.sendCreation(c, text, type);
        p.track(c, ex);
        const { status } = ex.res;
        const sent = `${ex.req.method} ${ex.req.path}`;
        if (status === 400) shown.push(`${sent} with malformed ${name} → 400`);
        else if (status > 400 && status < 500) shown.push(`${sent} with malformed ${name} → ${status}`);
        else
          p.problem(
            `${sent} with malformed ${name} answered ${statusLine(ex.res)}, not ` +
              `400${status >= 500 ? ": the client's mistake is reported as the server's" : ""}`,
            ex,
          );
      }
    }
    return shown.join("; ");
  },
);
