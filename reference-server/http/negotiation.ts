// Content negotiation: which representation a request accepts (Accept, with q-values) and which one it sends (Content-Type).

export type Format = "json" | "xml";

/** The media types the server produces, in its order of preference when a client rates them equally. */
export const MEDIA_TYPES: Readonly<Record<Format, string>> = {
  json: "application/json",
  xml: "application/xml",
};

const OFFERED: readonly Format[] = ["json", "xml"];

interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters other than q, lowercased names. */
  params: Map<string, string>;
  q: number;
}

/**
 * The format to answer in, or undefined when the client accepts none of them (406). A missing or empty Accept
 * accepts anything (RFC 9110 §12.5.1). Each offered type takes the q of the most specific range that matches
 * it; q=0 refuses it; the highest q wins and ties go to JSON, the usual choice (spec part 1).
 */
export function negotiate(accept: string | undefined): Format | undefined {
  if (accept === undefined || accept.trim() === "") return "json";
  const ranges = parseAccept(accept);
  let best: { format: Format; q: number } | undefined;
  for (const format of OFFERED) {
    const q = qualityOf(MEDIA_TYPES[format], ranges);
    if (q > 0 && (best === undefined || q > best.q)) best = { format, q };
  }
  return best?.format;
}

function qualityOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const [type, subtype] = mediaType.split("/") as [string, string];
  let bestSpecificity = -1;
  let q = 0;
  for (const range of ranges) {
    let specificity: number;
    if (range.type === "*" && range.subtype === "*") specificity = 0;
    else if (range.type === type && range.subtype === "*") specificity = 1;
    else if (range.type === type && range.subtype === subtype) specificity = 2 + range.params.size;
    else continue;
    if (!paramsAllow(range.params)) continue;
    if (specificity > bestSpecificity) {
      bestSpecificity = specificity;
      q = range.q;
    }
  }
  return q;
}

/** Both representations are UTF-8 and take no other parameters; a range asking for anything else does not match. */
function paramsAllow(params: ReadonlyMap<string, string>): boolean {
  for (const [name, value] of params) {
    if (name !== "charset" || value.toLowerCase() !== "utf-8") return false;
  }
  return true;
}

/** Ranges that do not parse are left out rather than failing the request: a client gets 406, not 400, for them. */
function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const element of splitOutsideQuotes(header, ",")) {
    const [mediaRange = "", ...paramParts] = splitOutsideQuotes(element, ";").map((p) => p.trim());
    const match = /^([!#$%&'*+.^_`|~0-9a-z-]+)\/([!#$%&'*+.^_`|~0-9a-z-]+)$/i.exec(mediaRange);
    if (!match) continue;
    const type = match[1]!.toLowerCase();
    const subtype = match[2]!.toLowerCase();
    if (type === "*" && subtype !== "*") continue;
    const params = new Map<string, string>();
    let q = 1;
    let valid = true;
    for (const part of paramParts) {
      const eq = part.indexOf("=");
      if (eq <= 0) {
        valid = false;
        break;
      }
      const name = part.slice(0, eq).trim().toLowerCase();
      let value = part.slice(eq + 1).trim();
      if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1).replace(/\\(.)/g, "$1");
      if (name === "q") {
        // RFC 9110 §12.4.2: 0 to 1 with at most three decimals.
        if (!/^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value)) {
          valid = false;
          break;
        }
        q = Number(value);
        // Parameters after q are accept-extensions, not part of the range.
        break;
      }
      params.set(name, value);
    }
    if (valid) ranges.push({ type, subtype, params, q });
  }
  return ranges;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === "\\" && i + 1 < text.length) {
      current += c + text[++i]!;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === separator && !quoted) {
      parts.push(current);
      current = "";
    } else {
      current += c;
    }
  }
  parts.push(current);
  return parts.filter((p) => p.trim() !== "");
}

export type RequestFormat = { format: Format } | { unsupported: string };

/**
 * The format of a request body from its Content-Type. JSON and XML only (text/xml is the older name of the
 * same thing); a charset other than UTF-8 is refused rather than guessed at.
 */
export function requestFormat(contentType: string | undefined): RequestFormat {
  if (contentType === undefined || contentType.trim() === "") return { unsupported: "a Content-Type is required: application/json or application/xml" };
  const [essence = "", ...paramParts] = splitOutsideQuotes(contentType, ";").map((p) => p.trim());
  const mediaType = essence.toLowerCase();
  const format: Format | undefined =
    mediaType === "application/json" ? "json" : mediaType === "application/xml" || mediaType === "text/xml" ? "xml" : undefined;
  if (format === undefined) return { unsupported: `Content-Type ${essence} is not supported; send application/json or application/xml` };
  for (const part of paramParts) {
    const eq = part.indexOf("=");
    const name = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1").toLowerCase();
    if (name === "charset" && value !== "utf-8") return { unsupported: `charset ${value} is not supported; send UTF-8` };
  }
  return { format };
}
