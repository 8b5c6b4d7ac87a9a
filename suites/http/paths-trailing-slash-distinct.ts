// http.paths.trailing-slash-distinct: path + "/" is not served as the same resource (404, or a redirect to the path).
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { toTargetPath } from "./_internals/uri.js";

export const pathsTrailingSlashDistinct = httpCheck(
  {
    id: "http.paths.trailing-slash-distinct",
    title: "a path with a slash appended is not served as the same resource: 404, or a redirect to the canonical path",
    severity: "MUST",
    spec: "§4.2 rule 5",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const created = await p.createOrStop(c);
      const paths = [c, created.uri.path];
      // Two reads, neither depending on the other: sent side by side, judged in order.
      const exchanges = await p.all(paths.map((path) => () => p.get(`${path}/`)));
      for (const [i, path] of paths.entries()) shown.push(...judgeAlias(p, path, exchanges[i] as Exchange));
    }
    return shown.join("; ");
  },
);

/**
 * Shared with the case check: another spelling of a path (`ex`, a GET of it) is either not found or redirected to
 * the real one.
 */
export function judgeAlias(p: Probe, canonical: string, ex: Exchange, what = "a different path"): string[] {
  const variant = ex.req.path;
  const { status } = ex.res;
  if (status === 404 || status === 410) return [`GET ${variant} → ${status}`];
  if (status >= 300 && status < 400) {
    const location = ex.res.headers["location"]?.[0];
    const to = location === undefined ? undefined : toTargetPath(location, p.target.baseUrl, variant);
    if (to === canonical) return [`GET ${variant} → ${status} to ${canonical}`];
    p.problem(`GET ${variant} redirects (${status}) to ${location ?? "nowhere"}, not to ${canonical}`, ex);
    return [];
  }
  if (status >= 200 && status < 300)
    p.problem(`GET ${variant} answered ${statusLine(ex.res)}: ${what} is served as ${canonical}`, ex);
  else p.problem(`GET ${variant} answered ${statusLine(ex.res)}, not 404 or a redirect to ${canonical}`, ex);
  return [];
}
