// http.paths.case-sensitive (SHOULD): an upper-cased path segment is not served as the same resource.
import { type Exchange, httpCheck } from "./_internals/probe.js";
import { judgeAlias } from "./paths-trailing-slash-distinct.js";

/** Upper-cases the collection's last name, never an id: ids are the server's to spell. */
function upperCased(collection: string): string {
  const at = collection.lastIndexOf("/");
  return collection.slice(0, at + 1) + collection.slice(at + 1).toUpperCase();
}

export const pathsCaseSensitive = httpCheck(
  {
    id: "http.paths.case-sensitive",
    title: "an upper-cased path segment is not served as the same resource",
    severity: "SHOULD",
    spec: "§4.2 rules 5 and 7",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      if (upperCased(c) === c) continue;
      const created = await p.createOrStop(c);
      const pairs: [string, string][] = [[c, upperCased(c)]];
      if (created.uri.path.startsWith(`${c}/`))
        pairs.push([created.uri.path, upperCased(c) + created.uri.path.slice(c.length)]);
      // Reads only, neither depending on the other: sent side by side, judged in order.
      const exchanges = await p.all(
        pairs.map(
          ([, variant]) =>
            () =>
              p.get(variant),
        ),
      );
      for (const [i, [canonical]] of pairs.entries())
        shown.push(...judgeAlias(p, canonical, exchanges[i] as Exchange, "an upper-cased spelling"));
    }
    return shown.join("; ");
  },
);
