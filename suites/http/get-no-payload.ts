// http.get.no-payload: GET needs no body, and a filter goes in the query: ?body=X selects the messages with that body.
import { httpCheck, statusLine, uniqueBody } from "./_internals/probe.js";

export const getNoPayload = httpCheck(
  {
    id: "http.get.no-payload",
    title: "GET without a body reads a collection and a message, and a query filter (?body=) changes the result",
    severity: "MUST",
    spec: "§4.2 rule 11",
  },
  async (p) => {
    const shown: string[] = [];
    for (const c of p.collections) {
      const a = await p.createOrStop(c, uniqueBody("filter-a"));
      const b = await p.createOrStop(c, uniqueBody("filter-b"));
      const doc = await p.get(a.uri.path);
      if (doc.res.status !== 200) p.problem(`GET ${a.uri.path} with no body answered ${statusLine(doc.res)}, not 200`, doc);
      const all = await p.get(c);
      if (all.res.status !== 200) {
        p.problem(`GET ${c} with no body answered ${statusLine(all.res)}, not 200`, all);
        continue;
      }
      // A full page may leave new messages out; the filter below is what the rule is about.
      if (!all.res.text.includes(a.body) || !all.res.text.includes(b.body)) p.note(`GET ${c} did not list both new messages (paged?)`);
      const filter = `${c}?body=${encodeURIComponent(a.body)}`;
      const filtered = await p.get(filter);
      if (filtered.res.status !== 200) p.problem(`GET ${filter} answered ${statusLine(filtered.res)}: the collection does not filter on a query parameter`, filtered);
      else if (!filtered.res.text.includes(a.body)) p.problem(`GET ${filter} leaves out the message whose body it names`, filtered);
      else if (filtered.res.text.includes(b.body)) p.problem(`GET ${filter} also lists a message with another body: the filter changed nothing`, filtered);
      else shown.push(`GET ${c} and GET ${a.uri.path} need no body; ?body= selects one of two new messages`);
    }
    return shown.join("; ");
  },
);
