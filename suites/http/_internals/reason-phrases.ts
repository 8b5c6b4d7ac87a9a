// The standard reason phrases of RFC 9110 section 15 (and 6585), which level 2 of part 4.2 asks for in the status line.
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "Non-Authoritative Information",
  204: "No Content",
  205: "Reset Content",
  206: "Partial Content",
  300: "Multiple Choices",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  417: "Expectation Failed",
  421: "Misdirected Request",
  422: "Unprocessable Content",
  426: "Upgrade Required",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

/** Older names RFC 9110 renamed; servers built before it still send them, and they are standard text too. */
export const FORMER_REASON_PHRASES: Readonly<Record<number, readonly string[]>> = {
  413: ["Payload Too Large", "Request Entity Too Large"],
  414: ["Request-URI Too Long"],
  416: ["Requested Range Not Satisfiable"],
  422: ["Unprocessable Entity"],
};

/** Whether a reason phrase is the standard one for its code (case aside); undefined for a code with none listed. */
export function isStandardPhrase(status: number, phrase: string): boolean | undefined {
  const standard = REASON_PHRASES[status];
  if (standard === undefined) return undefined;
  const names = [standard, ...(FORMER_REASON_PHRASES[status] ?? [])].map((n) => n.toLowerCase());
  return names.includes(phrase.trim().toLowerCase());
}
