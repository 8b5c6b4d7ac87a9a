// Whether an XML reply is a well-formed document in its encoding, and the text an XML reader makes of its character
// data: what http.xml.well-formed and http.read.after-create judge an XML read by.
import type { Exchange } from "./probe.js";
import { parseXml } from "./links.js";

/** Characters outside XML's Char production (XML 1.0 §2.2), surrogates unpaired included. */
const NOT_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;
const CHAR_REFERENCE = /&#(?:x([0-9A-Fa-f]{1,8})|([0-9]{1,10}));/g;

/**
 * What makes an XML reply ill-formed: its bytes outside its encoding, a character or reference outside Char, or its
 * markup; undefined when well formed.
 */
export function illFormedXml(ex: Exchange): string | undefined {
  const bytes = ex.res.body;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(ex.res.headers["content-type"]?.[0] ?? "")?.[1];
  const head = Buffer.from(bytes.subarray(0, 200)).toString("latin1");
  const declared = /^\s*<\?xml[^>]*\sencoding\s*=\s*["']([A-Za-z0-9._-]{1,40})["']/.exec(head)?.[1];
  const encoding = (charset ?? declared ?? "utf-8").toLowerCase();
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    return `its bytes are not ${encoding} (Content-Type's charset, else the declaration, else UTF-8: XML 1.0 §4.3.3)`;
  }
  const raw = NOT_CHAR.exec(text);
  if (raw) return `it holds U+${codeOf(raw[0])} at character ${raw.index}, outside XML's Char (§2.2)`;
  for (const ref of text.matchAll(CHAR_REFERENCE)) {
    const code = ref[1] !== undefined ? parseInt(ref[1], 16) : Number(ref[2]);
    if (code > 0x10ffff || NOT_CHAR.test(String.fromCodePoint(code)))
      return `it holds ${ref[0]}, a reference to no Char (§4.1)`;
  }
  return parseXml(text).ok ? undefined : "its markup does not parse";
}

const codeOf = (char: string): string => (char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
