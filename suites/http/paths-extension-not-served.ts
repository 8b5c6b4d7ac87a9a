// http.paths.extension-not-served: path + ".json" and path + ".xml" get 404; the format is chosen with Accept.
import { type Exchange, httpCheck, statusLine } from "./_internals/probe.js";

export const pathsExtensionNotServed = httpCheck(
  {
    id: "http.paths.extension-not-served",
    title:
      "a path with .json or .xml appended is not served (404, or another 4xx such as 400 for an id that cannot " +
      "be one): the representation is chosen with Accept, not a file extension",
    severity: "MUST",
    spec: "§4.2 rule 8",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const created = await p.createOrStop(c);
      const variants = [`${c}.json`, `${c}.xml`, `${created.uri.path}.json`, `${created.uri.path}.xml`];
      // Reads only, none depending on another: sent side by side, judged in order.
      const exchanges = await p.all(variants.map((variant) => () => p.get(variant, { accept: "*/*" })));
      for (const [i, variant] of variants.entries()) {
        const ex = exchanges[i] as Exchange;
        // The exact code is the server's to choose: only a 4xx says the path names nothing it serves.
        if (ex.res.status >= 400 && ex.res.status < 500) shown.push(`GET ${variant} → ${ex.res.status}`);
        else
          p.problem(
            `GET ${variant} answered ${statusLine(ex.res)}, not 404 (a ` +
              `4xx)${ex.res.status < 300 ? ": the extension is served as a representation" : ""}`,
            ex,
          );
      }
    }
    return shown.join("; ");
  },
);
