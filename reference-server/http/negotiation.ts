// Content negotiation: which representation a request accepts (Accept, by negotiator) and which one it sends
// (Content-Type, by content-type).
import { parse as parseContentType } from "content-type";
import Negotiator from "negotiator";

export type Format = "json" | "xml";

/** The media types the server produces, in its order of preference when a client rates them equally. */
export const MEDIA_TYPES: Readonly<Record<Format, string>> = {
  json: "application/json",
  xml: "application/xml",
};

/** What is offered, as negotiator matches it: both UTF-8, so a range may ask for that charset and nothing else. */
const OFFERED = new Map<string, Format>([
  [`${MEDIA_TYPES.json}; charset=utf-8`, "json"],
  [`${MEDIA_TYPES.xml}; charset=utf-8`, "xml"],
]);

/** RFC 9110 §12.4.2: a weight is 0 to 1 with at most three decimals. */
const WEIGHT = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/**
 * The format to answer in, or undefined when the client accepts none of them (406). A missing or empty Accept
 * accepts anything (RFC 9110 §12.5.1). negotiator ranks the offers by q, then by the most specific range, then by
 * the client's order; q=0 refuses. A range whose weight is out of grammar (q=2) is left out, as an unparsable one is.
 */
export function negotiate(accept: string | undefined): Format | undefined {
  if (accept === undefined || accept.trim() === "") return "json";
  const chosen = new Negotiator({ headers: { accept: withValidWeights(accept) } }).mediaType([...OFFERED.keys()]);
  return chosen === undefined ? undefined : OFFERED.get(chosen);
}

function withValidWeights(accept: string): string {
  // Commas inside quoted parameter values do not separate ranges.
  return accept
    .split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)
    .filter((range) => {
      const q = /;\s*q\s*=\s*([^;]*)/i.exec(range)?.[1];
      return q === undefined || WEIGHT.test(q.trim());
    })
    .join(",");
}

export type RequestFormat = { format: Format } | { unsupported: string };

/**
 * The format of a request body from its Content-Type. JSON and XML only (text/xml is the older name of the
 * same thing); a charset other than UTF-8 is refused rather than guessed at.
 */
export function requestFormat(contentType: string | undefined): RequestFormat {
  if (contentType === undefined || contentType.trim() === "")
    return { unsupported: "a Content-Type is required: application/json or application/xml" };
  let parsed: { type: string; parameters: Record<string, string> };
  try {
    parsed = parseContentType(contentType);
  } catch {
    return {
      unsupported:
        `Content-Type ${contentType.split(";")[0]?.trim() ?? ""} is not supported; send application/json or ` +
        `application/xml`,
    };
  }
  const format: Format | undefined =
    parsed.type === "application/json"
      ? "json"
      : parsed.type === "application/xml" || parsed.type === "text/xml"
        ? "xml"
        : undefined;
  if (format === undefined)
    return { unsupported: `Content-Type ${parsed.type} is not supported; send application/json or application/xml` };
  const charset = parsed.parameters["charset"]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8")
    return { unsupported: `charset ${charset} is not supported; send UTF-8` };
  return { format };
}
