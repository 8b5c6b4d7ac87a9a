// http.paths.case-sensitive (SHOULD): an upper-cased path segment is not served as the same resource.
import { httpCheck } from "./_internals/probe.js";
import { notAnAlias } from "./paths-trailing-slash-distinct.js";

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
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      if (upperCased(c) === c) continue;
      const created = await p.createOrStop(c);
      shown.push(...(await notAnAlias(p, c, upperCased(c), "an upper-cased spelling")));
      const doc = upperCased(c) + created.uri.path.slice(c.length);
      if (created.uri.path.startsWith(`${c}/`)) shown.push(...(await notAnAlias(p, created.uri.path, doc, "an upper-cased spelling")));
    }
    return shown.join("; ");
  },
);
