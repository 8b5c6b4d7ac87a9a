// http.read.after-create: a created message is read back with GET on its own URI, with the body that was sent.
import { httpCheck, statusLine } from "./_internals/probe.js";
import { shownBody } from "./_internals/representation.js";

export const readAfterCreate = httpCheck(
  {
    id: "http.read.after-create",
    title: "GET on a created message's URI answers 200 with the body that was sent",
    severity: "MUST",
    spec: "§4.2 (method mapping: Read is GET; rule 9: one URI per resource)",
  },
  async (p) => {
    const shown: string[] = [];
    for (const { path: c } of await p.reach()) {
      const created = await p.createOrStop(c);
      const read = await p.get(created.uri.path);
      const body = p.bodyOf(read.res, created.body);
      if (read.res.status !== 200)
        p.problem(
          `GET ${created.uri.path} (from the ${created.uri.how}) answered ${statusLine(read.res)}, not 200`,
          read,
        );
      else if (body !== created.body)
        p.problem(
          `GET ${created.uri.path} shows ${shownBody(body)}, not the ${JSON.stringify(created.body)} that was created`,
          read,
        );
      else shown.push(`GET ${created.uri.path} (from the ${created.uri.how}) → 200 with the body sent`);
    }
    return shown.join("; ");
  },
);
