// http.delete.then-404: DELETE removes a message, and a GET afterwards answers 404 or 410.
import { httpCheck, statusLine } from "./_internals/probe.js";

export const deleteThen404 = httpCheck(
  {
    id: "http.delete.then-404",
    title: "DELETE on a message's URI answers 2xx, and GET then answers 404 (or 410)",
    severity: "MUST",
    spec: "§4.2 (method mapping: Delete is DELETE on the resource path) and §7",
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const created = await p.createOrStop(c);
      const del = await p.send({ method: "DELETE", path: created.uri.path, headers: { accept: "application/json" } });
      if (del.res.status < 200 || del.res.status >= 300) {
        p.problem(`DELETE ${created.uri.path} answered ${statusLine(del.res)}, not a 2xx`, del);
        continue;
      }
      const read = await p.get(created.uri.path);
      if (read.res.status === 404 || read.res.status === 410) {
        p.deleted(created.uri.path);
        shown.push(`DELETE ${created.uri.path} → ${del.res.status}, then GET → ${read.res.status}`);
      } else p.problem(`after DELETE ${created.uri.path} answered ${del.res.status}, GET answers ${statusLine(read.res)}, not 404 or 410`, read);
    }
    return shown.join("; ");
  },
);
