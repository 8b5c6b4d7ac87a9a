// http.head.matches-get: HEAD answers with GET's status and headers, and no body.
import type { HttpResponse } from "../../harness/targets/http-target.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE } from "./_internals/representation.js";

/** Headers whose value must be the same on HEAD as on GET: they describe the representation GET would send. */
const SAME_VALUE = ["content-type", "content-language", "content-encoding", "link", "allow", "location"];
/**
 * Headers that may differ between two exchanges, or that HEAD may leave out: RFC 9110 section 9.3.2 lets a server
 * omit on HEAD the fields whose value is only known while generating the content (digests and checksums).
 */
const MAY_DIFFER = new Set([
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "set-cookie",
  "age",
  "etag",
  "last-modified",
  "expires",
  "server-timing",
  "x-response-time",
  "x-request-id",
  "request-id",
  "traceparent",
  "vary",
  "digest",
  "content-digest",
  "repr-digest",
  "content-md5",
  "x-content-md5",
  "x-checksum",
  "x-content-sha256",
]);

export const headMatchesGet = httpCheck(
  {
    id: "http.head.matches-get",
    title: "HEAD answers with the same status and headers as GET, and an empty body",
    severity: "MUST",
    spec: "§4.2 (method mapping: HEAD reads header information)",
  },
  async (p) => {
    const shown: string[] = [];
    for (const { path: c } of await p.reach()) {
      const created = await p.createOrStop(c);
      const paths = [c, created.uri.path];
      // Reads only, none depending on another: sent side by side, judged in order.
      const exchanges = await p.all(
        paths.flatMap((path) => [
          () => p.get(path),
          () => p.send({ method: "HEAD", path, headers: { accept: JSON_TYPE } }),
        ]),
      );
      for (const [i, path] of paths.entries()) {
        const [get, head] = exchanges.slice(2 * i, 2 * i + 2) as [Exchange, Exchange];
        const before = p.problems.length;
        compare(p, get, head);
        if (p.problems.length === before) shown.push(`HEAD ${path} → ${head.res.status} like GET, no body`);
      }
    }
    return shown.join("; ");
  },
);

function compare(p: Probe, get: Exchange, head: Exchange): void {
  const path = head.req.path;
  if (head.res.status !== get.res.status) {
    p.problem(`HEAD ${path} answered ${statusLine(head.res)} where GET answered ${statusLine(get.res)}`, head);
    return;
  }
  if (head.res.body.length > 0) p.problem(`HEAD ${path} sent a body of ${head.res.body.length} bytes`, head);
  const differences: string[] = [];
  for (const name of SAME_VALUE) {
    const g = value(get.res, name);
    const h = value(head.res, name);
    if (g !== h) differences.push(`${name}: GET ${g ?? "(none)"}, HEAD ${h ?? "(none)"}`);
  }
  const headLength = value(head.res, "content-length");
  const getLength = value(get.res, "content-length") ?? String(get.res.body.length);
  if (headLength !== undefined && headLength !== getLength)
    differences.push(`content-length: GET ${getLength}, HEAD ${headLength}`);
  const missing = Object.keys(get.res.headers).filter(
    (n) => !MAY_DIFFER.has(n) && !SAME_VALUE.includes(n) && head.res.headers[n] === undefined,
  );
  if (missing.length > 0) differences.push(`only GET sends ${missing.join(", ")}`);
  if (differences.length > 0) p.problem(`HEAD ${path} headers differ from GET's: ${differences.join("; ")}`, head);
}

function value(res: HttpResponse, name: string): string | undefined {
  return res.headers[name]?.join(", ");
}
