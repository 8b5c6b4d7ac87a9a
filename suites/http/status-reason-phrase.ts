// http.status.reason-phrase (SHOULD, HTTP/1.1): the status line carries the standard reason phrase for its code.
import { isStandardPhrase, REASON_PHRASES } from "./_internals/reason-phrases.js";
import { type Created, type Exchange, httpCheck } from "./_internals/probe.js";
import { JSON_TYPE, uniqueBody } from "./_internals/representation.js";

export const statusReasonPhrase = httpCheck(
  {
    id: "http.status.reason-phrase",
    title: "HTTP/1.1 status lines carry the standard reason phrase (201 Created, 404 Not Found...)",
    severity: "SHOULD",
    spec: "§4.2 (level 2: the exact status code and text in the status line)",
    independent: true,
  },
  async (p) => {
    const seen: Exchange[] = [];
    for (const c of p.collections) {
      // Only the status lines are judged: what does not read what another made goes side by side, the read and the
      // DELETE of the created message after it. Judged in the order listed here.
      const [list, created, unknown, malformed] = (await p.all<Exchange | Created>([
        () => p.get(c),
        () => p.create(c),
        () => p.get(`${c}/${uniqueBody("no-such-id")}`),
        () => p.sendCreation(c, '{"body": ', JSON_TYPE),
      ])) as [Exchange, Created, Exchange, Exchange];
      seen.push(list, created.ex);
      if (created.uri) {
        seen.push(await p.get(created.uri.path));
        const del = await p.send({ method: "DELETE", path: created.uri.path, headers: { accept: JSON_TYPE } });
        seen.push(del);
        if (del.res.status >= 200 && del.res.status < 300) p.deleted(created.uri.path);
      }
      seen.push(unknown, malformed);
    }
    const judged = new Map<number, string>();
    for (const ex of seen) {
      const { status, statusText } = ex.res;
      if (ex.res.failure || judged.has(status)) continue;
      const standard = isStandardPhrase(status, statusText);
      if (standard === undefined) continue;
      judged.set(status, statusText);
      if (!standard)
        p.problem(
          `${p.describe(ex)}: the status line says ${JSON.stringify(statusText)}, not ` +
            `${JSON.stringify(REASON_PHRASES[status])}`,
          ex,
        );
    }
    // No answer to judge (every request failed, or no status has a standard phrase) is no pass.
    if (judged.size === 0)
      p.skip(
        `no status line to judge: ${seen.length} request(s), none answered with a status that has a standard ` +
          `reason phrase`,
      );
    return [...judged].map(([s, t]) => `${s} ${t}`).join(", ");
  },
);
