// http.stateless.replicas: what one instance stores, every other instance (--http-replica) reads, replaces and deletes.
import { skip } from "../../harness/check.js";
import type { HttpTarget } from "../../harness/targets/http-target.js";
import { type Exchange, httpCheck, type Probe, statusLine } from "./_internals/probe.js";
import { JSON_TYPE, messageJson, uniqueBody } from "./_internals/representation.js";

export const statelessReplicas = httpCheck(
  {
    id: "http.stateless.replicas",
    title: "a message created on one instance is read, replaced and deleted on each other instance (--http-replica)",
    severity: "MUST",
    spec: "§1 principle 2 (a request depends on earlier ones only through stored data, wherever it lands)",
    independent: true,
  },
  async (p) => {
    const replicas = p.config.replicas ?? [];
    if (replicas.length === 0)
      return skip(
        "no other instance given (--http-replica URL), so statelessness across replicas was not judged",
        "--http-replica",
      );
    const shown: string[] = [];
    // Every collection reached: the named ones, and a related one discovery found (under a message made for it).
    for (const { path: c } of await p.reach()) {
      for (const replica of replicas) {
        const created = await p.createOrStop(c);
        const path = created.uri.path;
        if (!(await readOnReplica(p, replica, path, created.body))) continue;
        const noPut = await replaceOnReplica(p, replica, path);
        if (noPut === false) continue;
        const del = await p.change({ method: "DELETE", path, headers: { accept: JSON_TYPE } }, replica);
        const noDelete = p.notOffered("delete", del);
        if (noDelete !== undefined) {
          shown.push(
            `created on ${p.target.baseUrl}, read${noPut === undefined ? " and replaced" : ""} on ${replica.baseUrl} ` +
              `(${[noPut, noDelete]
                .filter((r) => r !== undefined)
                .map((r) => `not offered: ${r}`)
                .join("; ")})`,
          );
          continue;
        }
        const after = await p.get(path);
        if (after.res.status === 404 || after.res.status === 410) p.deleted(path);
        if (del.res.status < 200 || del.res.status >= 300 || (after.res.status !== 404 && after.res.status !== 410)) {
          p.problem(
            `DELETE ${path} on ${replica.baseUrl} answered ${statusLine(del.res)}, and GET on ` +
              `${p.target.baseUrl} then answers ${statusLine(after.res)}, not 404 or 410`,
            after,
          );
          continue;
        }
        shown.push(
          `created on ${p.target.baseUrl}, read, ${noPut === undefined ? "replaced and " : ""}deleted on ` +
            `${replica.baseUrl}${noPut === undefined ? "" : ` (not offered: ${noPut})`}`,
        );
      }
    }
    return shown.join("; ");
  },
);

/** One exchange with a replica, counted in the check's bound like the rest. */
const on = (p: Probe, replica: HttpTarget, req: Parameters<HttpTarget["request"]>[0]): Promise<Exchange> =>
  p.sendOn(replica, req);

/** A message created on the target reads back, its body whole, on the replica; else a problem said. */
async function readOnReplica(p: Probe, replica: HttpTarget, path: string, body: string): Promise<boolean> {
  const read = await on(p, replica, { method: "GET", path, headers: { accept: JSON_TYPE } });
  if (read.res.status !== 200 || p.bodyOf(read.res, body) !== body) {
    p.problem(
      `a message created at ${p.target.baseUrl}${path}: GET ${path} on ${replica.baseUrl} answered ` +
        `${statusLine(read.res)}` +
        `${read.res.status === 200 ? ` with body ${JSON.stringify(p.bodyOf(read.res))}` : ""}, ` +
        `not 200 with the body sent`,
      read,
    );
    return false;
  }
  return true;
}

/**
 * Replaces the message on the replica and reads it back on the target: undefined when that held, the reason when
 * the resource does not offer replacement, false (a problem said) when it failed.
 */
async function replaceOnReplica(p: Probe, replica: HttpTarget, path: string): Promise<string | undefined | false> {
  const replacement = uniqueBody("replica");
  const put = await p.change(
    {
      method: "PUT",
      path,
      headers: { accept: JSON_TYPE, "content-type": JSON_TYPE },
      body: messageJson(replacement),
    },
    replica,
  );
  // A resource that does not offer replacement or deletion says so (405 with Allow, 501): not judged there.
  const noPut = p.notOffered("replace", put);
  const back = noPut === undefined ? await p.get(path) : undefined;
  if (
    back !== undefined &&
    (put.res.status < 200 || put.res.status >= 300 || p.bodyOf(back.res, replacement) !== replacement)
  ) {
    p.problem(
      `PUT ${path} on ${replica.baseUrl} answered ${statusLine(put.res)}, and GET on ${p.target.baseUrl} ` +
        `then shows ${JSON.stringify(p.bodyOf(back.res))}, not the replacement`,
      back,
    );
    return false;
  }
  return noPut;
}
