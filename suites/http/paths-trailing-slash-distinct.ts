// http.paths.trailing-slash-distinct: path + "/" is not served as the same resource (404, or a redirect to the path).
import { httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { toTargetPath } from "./_internals/uri.js";

export const pathsTrailingSlashDistinct = httpCheck(
  {
    id: "http.paths.trailing-slash-distinct",
    title: "a path with a slash appended is not served as the same resource: 404, or a redirect to the canonical path",
    severity: "MUST",
    spec: "§4.2 rule 5",
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const created = await p.createOrStop(c);
      for (const path of [c, created.uri.path]) shown.push(...(await notAnAlias(p, path, `${path}/`)));
    }
    return shown.join("; ");
  },
);

/** Shared with the case check: another spelling of a path is either not found or redirected to the real one. */
export async function notAnAlias(p: Probe, canonical: string, variant: string, what = "a different path"): Promise<string[]> {
  const ex = await p.get(variant);
  const { status } = ex.res;
  if (status === 404 || status === 410) return [`GET ${variant} → ${status}`];
  if (status >= 300 && status < 400) {
    const location = ex.res.headers["location"]?.[0];
    const to = location === undefined ? undefined : toTargetPath(location, p.target.baseUrl, variant);
    if (to === canonical) return [`GET ${variant} → ${status} to ${canonical}`];
    p.problem(`GET ${variant} redirects (${status}) to ${location ?? "nowhere"}, not to ${canonical}`, ex);
    return [];
  }
  if (status >= 200 && status < 300) p.problem(`GET ${variant} answered ${statusLine(ex.res)}: ${what} is served as ${canonical}`, ex);
  else p.problem(`GET ${variant} answered ${statusLine(ex.res)}, not 404 or a redirect to ${canonical}`, ex);
  return [];
}
