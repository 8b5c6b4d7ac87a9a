// A request as the curl line that repeats it, for a failure's report: the API key as its placeholder, and bytes a
// shell string cannot hold through printf.
import { shellQuote } from "../_internals/shell-quote.js";
import type { HttpRequest } from "./http-target.js";

/** The placeholder the specification uses where a key goes (part 5): reports never carry the real key. */
export const API_KEY_PLACEHOLDER = "<API_KEY>";

export interface CurlRequest {
  /** The request as a check asked for it. */
  req: HttpRequest;
  /** The headers it is sent with, the key already shown as API_KEY_PLACEHOLDER where it goes in a header. */
  headers: Record<string, string>;
  /** Origin and path, the key already shown as API_KEY_PLACEHOLDER where it goes in the query. */
  url: string;
  /** The run's key, replaced wherever it still appears. */
  apiKey?: string;
}

export function renderCurl({ req, headers, url, apiKey }: CurlRequest): string {
  const parts = ["curl", "-sS", "-i"];
  const method = req.method.toUpperCase();
  if (method === "HEAD") parts.push("--head");
  else if (method !== "GET" || req.body !== undefined) parts.push("-X", shellQuote(method));
  for (const [k, v] of Object.entries(headers)) {
    if (k === "user-agent") continue;
    const shown = apiKey !== undefined ? v.split(apiKey).join(API_KEY_PLACEHOLDER) : v;
    parts.push("-H", shellQuote(`${k}: ${shown}`));
  }
  let pipe = "";
  if (req.body !== undefined) {
    const bytes = typeof req.body === "string" ? Buffer.from(req.body, "utf8") : Buffer.from(req.body);
    if (isPrintable(bytes)) {
      parts.push("--data-binary", shellQuote(bytes.toString("utf8")));
    } else {
      // Bytes a shell string cannot hold go through printf's octal escapes, which every POSIX shell knows.
      pipe = `printf '${[...bytes].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("")}' | `;
      parts.push("--data-binary", "@-");
    }
  }
  parts.push(shellQuote(url));
  return pipe + parts.join(" ");
}

function isPrintable(bytes: Buffer): boolean {
  const text = bytes.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(bytes)) return false;
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(text);
}
