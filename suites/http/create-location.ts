// http.create.location (SHOULD): the 201 carries a Location that GETs 200 with the fields that were sent.
import { httpCheck, statusLine } from "./_internals/probe.js";
import { shownBody } from "./_internals/representation.js";
import { toTargetPath } from "./_internals/uri.js";

export const createLocation = httpCheck(
  {
    id: "http.create.location",
    title: "a creating POST carries a Location header naming the created resource, which GETs 200 with the fields sent",
    severity: "SHOULD",
    spec: "§4.2 (a creating POST may add Location with the created resource's URI)",
    independent: true,
  },
  async (p) => {
    const shown: string[] = [];
    const byPut: string[] = [];
    for (const { path: c } of await p.reach()) {
      const created = await p.createOrStop(c);
      // A store creates by PUT at the URI its client chose: there is no new URI for a Location to name.
      if (created.ex.req.method === "PUT") {
        byPut.push(
          `${c} creates by PUT at the URI the client chooses (${created.ex.req.path} → ${created.ex.res.status})`,
        );
        continue;
      }
      const location = created.ex.res.headers["location"]?.[0];
      if (location === undefined) {
        p.problem(
          `POST ${c} created a message (found by its ${created.uri.how}) but sent no Location header`,
          created.ex,
        );
        continue;
      }
      const path = toTargetPath(location, p.target.baseUrl, c);
      if (path === undefined) {
        p.problem(
          `POST ${c} sent Location ${JSON.stringify(location)}, which is not on the target's origin`,
          created.ex,
        );
        continue;
      }
      const read = await p.get(path);
      const body = p.bodyOf(read.res, created.body);
      if (read.res.status !== 200)
        p.problem(`Location ${location} answered ${statusLine(read.res)} to GET, not 200`, read);
      else if (body !== created.body)
        p.problem(
          `GET of Location ${location} shows ${shownBody(body)}, not the ${JSON.stringify(created.body)} that was sent`,
          read,
        );
      else shown.push(`POST ${c} → Location ${location} → GET 200 with the body sent`);
    }
    if (shown.length === 0 && byPut.length > 0 && p.problems.length === 0)
      p.skip(`not applicable: ${byPut.join("; ")}, so there is no new URI for a Location to name`);
    return [...shown, ...byPut].join("; ");
  },
);
