// http.create.status-201: POST of a representation to a collection answers 201 Created; 200 fails.
import { httpCheck, statusLine } from "./_internals/probe.js";

export const createStatus201 = httpCheck(
  {
    id: "http.create.status-201",
    title: "POST of a message to a collection answers 201 Created (200 fails)",
    severity: "MUST",
    spec: "§4.2 (method mapping: a creating POST answers 201) and §7",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    for (const { path: c } of await p.reach()) {
      const { ex } = await p.create(c);
      if (ex.res.status === 201) shown.push(p.describe(ex));
      else
        p.problem(
          `POST ${c} answered ${statusLine(ex.res)}, not 201 ` +
            `Created${ex.res.status === 200 ? ": 200 does not say that something was created" : ""}`,
          ex,
        );
    }
    return shown.join("; ");
  },
);
