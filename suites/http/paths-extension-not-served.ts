// http.paths.extension-not-served: path + ".json" and path + ".xml" get 404; the format is chosen with Accept.
import { httpCheck, statusLine } from "./_internals/probe.js";

export const pathsExtensionNotServed = httpCheck(
  {
    id: "http.paths.extension-not-served",
    title: "a path with .json or .xml appended gets 404: the representation is chosen with Accept, not a file extension",
    severity: "MUST",
    spec: "§4.2 rule 8",
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const created = await p.createOrStop(c);
      for (const variant of [`${c}.json`, `${c}.xml`, `${created.uri.path}.json`, `${created.uri.path}.xml`]) {
        const ex = await p.get(variant, { accept: "*/*" });
        if (ex.res.status === 404 || ex.res.status === 410) shown.push(`GET ${variant} → ${ex.res.status}`);
        else p.problem(`GET ${variant} answered ${statusLine(ex.res)}, not 404${ex.res.status < 300 ? ": the extension is served as a representation" : ""}`, ex);
      }
    }
    return shown.join("; ");
  },
);
