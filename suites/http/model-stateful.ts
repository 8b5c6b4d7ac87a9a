// http.model.stateful (property): sequences of operations over each collection reached, every reply judged against
// a model of what the stored data must be (part 4.2's method mapping): a create adds exactly one message, a replace
// changes exactly that one and adds none, a delete removes exactly that one, a read changes nothing, and the listing
// shows what the model holds. One fixed walk over every operation first, then sequences fast-check generates from the
// run's seed, a failure shrunk to its shortest sequence and printed with a curl line per step.
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { fail, type CheckOutcome } from "../../harness/check.js";
import { httpCheck, SkipProbe, StopProbe, statusLine, type Exchange, type Probe } from "./_internals/probe.js";
import { JSON_TYPE, shownBody, uniqueBody } from "./_internals/representation.js";
import { countListed, readListing } from "./_internals/uri.js";

/** Generated sequences per collection, past the fixed walk (at most the run's --runs). */
const MAX_SEQUENCES = 3;
const MAX_COMMANDS = 8;
/** Requests one collection's model may spend, shrinking included; a command starts only with this many left. */
const REQUESTS_PER_COLLECTION = 250;
const RESERVE = 25;
/** Steps shown with their curl lines when a sequence fails. */
const STEPS_SHOWN = 16;

interface Model {
  p: Probe;
  /** Path of each message the sequence created and has not deleted, to the body it must show. */
  live: Map<string, string>;
  /** Paths the sequence deleted: GET must answer 404 or 410. */
  gone: string[];
  /** Bodies replaced or deleted: no longer in the listing. */
  retired: Set<string>;
  /** Operations the collection's messages do not offer, by their own answer (405 with Allow, 501). */
  refused: Set<"replace" | "delete" | "head">;
  /** The sequence could not go on for a reason that is no defect (nothing located the message); said once. */
  halted?: string;
}

interface Real {
  collection: string;
  steps: { what: string; ex: Exchange }[];
}

class ModelFailure extends Error {}

type Command = fc.AsyncCommand<Model, Real>;

const nth = <T>(items: Iterable<T>, index: number): T | undefined => {
  const all = [...items];
  return all.length === 0 ? undefined : all[index % all.length];
};
const UUID_FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A path in the collection at an id no one handed out, in the form of the server's own ids when the sequence holds
 * one (a counter at its end given six more digits; else its last four characters changed, each digit to a digit, each
 * letter to one of its case), so that a server that refuses ids of another form (400) is asked about an id it could
 * have given; a UUID otherwise.
 */

function unknownPath(m: Model, collection: string): string {
  const known = [...m.live.keys(), ...m.gone];
  const sample = known[0]?.slice(collection.length + 1);
  const pick = (chars: string) => chars[Math.floor(Math.random() * chars.length)] as string;
  for (let attempt = 0; sample !== undefined && sample !== "" && !sample.includes("/") && attempt < 8; attempt++) {
    // A number gets six more digits: past every id a counter has handed out, and still a number. So does an id that
    // ends in a counter (msg:35, 2026.0.35, a slug's -35), a UUID aside: changing its last digits could name an id the
    // server handed out before the run (seeded) that this model never saw.
    const decoded = decodeURIComponent(sample);
    if (/^[0-9]+$/.test(sample) || (/[0-9]$/.test(decoded) && !UUID_FORM.test(decoded)))
      return `${collection}/${encodeURIComponent(decoded)}${String(Math.floor(Math.random() * 900_000) + 100_000)}`;
    // Otherwise only the last four characters change: a prefix (a ULID's time, "msg:") keeps the id in the server's
    // form.
    const chars = [...decodeURIComponent(sample)];
    const id = chars
      .map((ch, i) =>
        i < chars.length - 4
          ? ch
          : /[0-9]/.test(ch)
            ? pick("0123456789")
            : /[a-z]/.test(ch)
              ? pick("abcdefghijklmnopqrstuvwxyz")
              : /[A-Z]/.test(ch)
                ? pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
                : ch,
      )
      .join("");
    const path = `${collection}/${encodeURIComponent(id)}`;
    if (!known.includes(path)) return path;
  }
  return `${collection}/${randomUUID()}`;
}

const ok = (ex: Exchange) => ex.res.status >= 200 && ex.res.status < 300;
const usable = (m: Model) => m.halted === undefined && m.p.remaining > RESERVE;

async function step(r: Real, what: string, send: Promise<Exchange>): Promise<Exchange> {
  const ex = await send;
  r.steps.push({ what, ex });
  return ex;
}

class Create implements Command {
  check = usable;
  async run(m: Model, r: Real): Promise<void> {
    const created = await m.p.create(r.collection, uniqueBody("model"));
    r.steps.push({ what: "create", ex: created.ex });
    if (!ok(created.ex)) throw new ModelFailure(`creating a message answered ${statusLine(created.ex.res)}, not a 2xx`);
    if (!created.uri) {
      m.halted =
        `${created.ex.req.method} ${created.ex.req.path} created a message that neither the answer nor the listing ` +
        `locates`;
      return;
    }
    if (m.live.has(created.uri.path))
      throw new ModelFailure(
        `creating a message answered the URI of one already there (${created.uri.path}, by its ` +
          `${created.uri.how}): a create must add one`,
      );
    m.live.set(created.uri.path, created.body);
  }
  toString = () => "create";
}

class Read implements Command {
  constructor(readonly index: number) {}
  check = (m: Model) => usable(m) && m.live.size > 0;
  async run(m: Model, r: Real): Promise<void> {
    const [path, body] = nth(m.live, this.index) as [string, string];
    const ex = await step(r, `read ${path}`, m.p.get(path));
    const shown = ex.res.status === 200 ? m.p.bodyOf(ex.res, body) : undefined;
    if (ex.res.status !== 200 || shown !== body) {
      throw new ModelFailure(
        `GET ${path} answered ${ex.res.status === 200 ? `with ${shownBody(shown)}` : statusLine(ex.res)}, where ` +
          `the message holds ${JSON.stringify(body)}`,
      );
    }
  }
  toString = () => `read(${this.index})`;
}

class Head implements Command {
  constructor(readonly index: number) {}
  check = (m: Model) => usable(m) && m.live.size > 0 && !m.refused.has("head");
  async run(m: Model, r: Real): Promise<void> {
    const [path] = nth(m.live, this.index) as [string, string];
    const ex = await step(r, `head ${path}`, m.p.send({ method: "HEAD", path, headers: { accept: JSON_TYPE } }));
    if (m.p.notOffered("head", ex) !== undefined) m.refused.add("head");
    else if (ex.res.status !== 200)
      throw new ModelFailure(`HEAD ${path} of a message answered ${statusLine(ex.res)}, where GET answers 200`);
  }
  toString = () => `head(${this.index})`;
}

class Replace implements Command {
  constructor(readonly index: number) {}
  check = (m: Model) => usable(m) && m.live.size > 0 && !m.refused.has("replace");
  async run(m: Model, r: Real): Promise<void> {
    const [path, old] = nth(m.live, this.index) as [string, string];
    const body = uniqueBody("model-put");
    const ex = await step(r, `replace ${path}`, m.p.replace(path, body));
    if (m.p.notOffered("replace", ex) !== undefined) return void m.refused.add("replace");
    if (!ok(ex))
      throw new ModelFailure(`PUT ${path} of a message's representation answered ${statusLine(ex.res)}, not a 2xx`);
    m.retired.add(old);
    m.live.set(path, body);
  }
  toString = () => `replace(${this.index})`;
}

/**
 * PUT at an id no one handed out: refused (4xx), or stored there (a store's create): never a 2xx that stores nothing.
 */
class ReplaceUnknown implements Command {
  check = (m: Model) => usable(m) && !m.refused.has("replace");
  async run(m: Model, r: Real): Promise<void> {
    const path = unknownPath(m, r.collection);
    const body = uniqueBody("model-put-new");
    const ex = await step(r, `replace unknown ${path}`, m.p.replace(path, body));
    if (ex.res.status >= 500)
      throw new ModelFailure(`PUT ${path}, an id no one handed out, answered ${statusLine(ex.res)}: a server error`);
    if (!ok(ex)) return;
    m.p.own(path);
    const read = await step(r, `read ${path}`, m.p.get(path));
    const shown = read.res.status === 200 ? m.p.bodyOf(read.res, body) : undefined;
    if (read.res.status !== 200 || shown !== body) {
      throw new ModelFailure(
        `PUT ${path}, an id no one handed out, answered ${ex.res.status}, but GET then answered ` +
          `${read.res.status === 200 ? `with ${shownBody(shown)}` : statusLine(read.res)}: a 2xx to PUT says the ` +
          `representation was stored (RFC 9110 9.3.4); refuse it (404) or store it (201)`,
      );
    }
    m.live.set(path, body);
  }
  toString = () => "replaceUnknown";
}

class Delete implements Command {
  constructor(readonly index: number) {}
  check = (m: Model) => usable(m) && m.live.size > 0 && !m.refused.has("delete");
  async run(m: Model, r: Real): Promise<void> {
    const [path, body] = nth(m.live, this.index) as [string, string];
    const ex = await step(r, `delete ${path}`, m.p.remove(path));
    if (m.p.notOffered("delete", ex) !== undefined) return void m.refused.add("delete");
    if (!ok(ex)) throw new ModelFailure(`DELETE ${path} of a message answered ${statusLine(ex.res)}, not a 2xx`);
    m.p.deleted(path);
    m.live.delete(path);
    m.gone.push(path);
    m.retired.add(body);
  }
  toString = () => `delete(${this.index})`;
}

class ReadGone implements Command {
  constructor(readonly index: number) {}
  check = (m: Model) => usable(m) && m.gone.some((g) => !m.live.has(g));
  async run(m: Model, r: Real): Promise<void> {
    const path = nth(
      m.gone.filter((g) => !m.live.has(g)),
      this.index,
    ) as string;
    const ex = await step(r, `read deleted ${path}`, m.p.get(path));
    if (ex.res.status !== 404 && ex.res.status !== 410)
      throw new ModelFailure(
        `GET ${path}, deleted earlier in the sequence, answered ${statusLine(ex.res)}, not 404 or 410`,
      );
  }
  toString = () => `readGone(${this.index})`;
}

class ReadUnknown implements Command {
  check = usable;
  async run(m: Model, r: Real): Promise<void> {
    const path = unknownPath(m, r.collection);
    const ex = await step(r, `read unknown ${path}`, m.p.get(path));
    if (ex.res.status < 400 || ex.res.status >= 500)
      throw new ModelFailure(`GET ${path}, an id no one handed out, answered ${statusLine(ex.res)}, not a 4xx (404)`);
  }
  toString = () => "readUnknown";
}

/**
 * A listing that shows none of the model's bodies still names its live messages, by id or link: one that names none
 * of them (an empty listing, whatever is stored) has lost them. Read whole within its bound; the ids are searched in
 * the pages' text, so a short id found by chance passes rather than fails.
 */
async function namesLive(m: Model, r: Real): Promise<void> {
  if (m.live.size === 0) return;
  let text = "";
  const read = await readListing(
    (path) => step(r, `list ${path}`, m.p.get(path)),
    r.collection,
    m.p.target.baseUrl,
    (value) => {
      text += JSON.stringify(value);
      return false;
    },
  );
  if (!read.complete) return;
  const ids = [...m.live.keys()].map((path) => decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)));
  if (ids.some((id) => id !== "" && text.includes(id))) return;
  throw new ModelFailure(
    `the listing of ${r.collection} names none of the ${ids.length} message(s) the sequence created and did not ` +
      `delete (${[...m.live.keys()].slice(0, 3).join(", ")}): neither their bodies nor their ids`,
  );
}

/** The listing, read whole within its bound: each message the model holds once, nothing replaced or deleted. */
class List implements Command {
  check = (m: Model) => usable(m) && m.live.size + m.retired.size > 0;
  async run(m: Model, r: Real): Promise<void> {
    const live = [...m.live.values()];
    const read = await countListed(
      (path) => step(r, `list ${path}`, m.p.get(path)),
      r.collection,
      [...live, ...m.retired],
      m.p.target.baseUrl,
    );
    if (!read.complete) return;
    // A listing that shows no body of the model's at all (ids and links only): nothing to count, but it must name them.
    if (!live.some((b) => (read.counts.get(b) ?? 0) > 0)) return namesLive(m, r);
    for (const [path, body] of m.live) {
      const n = read.counts.get(body) ?? 0;
      if (n === 0)
        throw new ModelFailure(
          `the listing of ${r.collection} does not show ${JSON.stringify(body)}, the body of ${path}, though it ` +
            `shows the sequence's other messages`,
        );
      if (n > 1)
        throw new ModelFailure(
          `the listing of ${r.collection} shows ${JSON.stringify(body)} ${n} times, where the sequence stored it ` +
            `once (at ${path}): an operation added a message`,
        );
    }
    for (const body of m.retired) {
      const n = read.counts.get(body) ?? 0;
      if (n > 0)
        throw new ModelFailure(
          `the listing of ${r.collection} still shows ${JSON.stringify(body)} ${n} time(s), a body replaced or ` +
            `deleted earlier in the sequence`,
        );
    }
  }
  toString = () => "list";
}

/** Every operation once, in an order that exercises each against what the ones before did. */
const WALK: readonly Command[] = [
  new Create(),
  new Create(),
  new Read(0),
  new Replace(0),
  new List(),
  new Read(0),
  new ReplaceUnknown(),
  new Head(1),
  new Delete(1),
  new ReadGone(0),
  new ReadUnknown(),
  new List(),
];

const commands = [
  fc.constant(new Create()),
  fc.nat(7).map((i) => new Read(i)),
  fc.nat(7).map((i) => new Head(i)),
  fc.nat(7).map((i) => new Replace(i)),
  fc.constant(new ReplaceUnknown()),
  fc.nat(7).map((i) => new Delete(i)),
  fc.nat(7).map((i) => new ReadGone(i)),
  fc.constant(new ReadUnknown()),
  fc.constant(new List()),
];

export const modelStateful = httpCheck(
  {
    id: "http.model.stateful",
    title:
      "sequences of create, read, HEAD, replace (of a message, of an unknown id), delete and listing: each reply " +
      "agrees with a model of the stored data",
    severity: "MUST",
    spec: "§4.2 (method mapping: Create, Read, Update, Delete, Read header information) and §7",
  },
  async (p) => {
    const reached = await p.reach();
    p.allowRequests(REQUESTS_PER_COLLECTION * Math.max(1, reached.length));
    const shown: string[] = [];
    for (const { path: collection } of reached) {
      const outcome = await judge(p, collection);
      if (typeof outcome !== "string") return outcome;
      shown.push(outcome);
    }
    return shown.join("; ");
  },
);

/** One collection: the fixed walk, then the generated sequences; a string says what held, an outcome is the failure. */
async function judge(p: Probe, collection: string): Promise<string | CheckOutcome> {
  let halt: unknown;
  let failed: { steps: Real["steps"]; error: unknown } | undefined;
  const fresh = (): { model: Model; real: Real } => ({
    model: { p, live: new Map(), gone: [], retired: new Set(), refused: new Set() },
    real: { collection, steps: [] },
  });
  let lastModel: Model | undefined;
  /** Runs one sequence; deletes what it left, so that the listing stays as short as it began. */
  const runSequence = async (cmds: Iterable<Command>): Promise<void> => {
    const state = fresh();
    lastModel = state.model;
    try {
      if (halt !== undefined) return;
      await fc.asyncModelRun(() => state, cmds);
    } catch (err) {
      if (err instanceof SkipProbe || err instanceof StopProbe) {
        halt = err;
        return;
      }
      failed = { steps: state.real.steps, error: err };
      throw err;
    } finally {
      for (const path of state.model.live.keys()) {
        if (p.remaining <= 1) break;
        const del = await p.remove(path).catch(() => undefined);
        if (del && ok(del)) p.deleted(path);
      }
    }
  };
  try {
    await runSequence(WALK);
  } catch {
    return failure(p, collection, failed, "the fixed walk over every operation");
  }
  if (halt !== undefined) throw halt;
  const walked = lastModel as Model;
  if (walked.halted !== undefined) p.skip(walked.halted);
  const refused = [...walked.refused];
  const bound = Math.max(2000, p.ctx.timeoutMs * 4);
  const details = await fc.check(
    fc.asyncProperty(fc.commands(commands, { maxCommands: MAX_COMMANDS, size: "max" }), (cmds) => runSequence(cmds)),
    {
      seed: p.ctx.seed,
      numRuns: Math.min(p.ctx.runs, MAX_SEQUENCES),
      ...(p.ctx.path !== undefined && { path: p.ctx.path }),
      interruptAfterTimeLimit: bound,
      markInterruptAsFailure: false,
    },
  );
  if (halt !== undefined) throw halt;
  if (details.failed && details.counterexample) {
    const outcome = failure(p, collection, failed, String(details.counterexample[0]));
    return { ...outcome, ...(details.counterexamplePath !== null && { path: details.counterexamplePath }) };
  }
  if (details.failed) return { status: "error", message: `the model could not run: ${String(details.errorInstance)}` };
  const also = refused.length > 0 ? `; not offered, by the server's own answer: ${refused.join(", ")}` : "";
  return (
    `${collection}: every operation walked once, then ${details.numRuns} generated sequence(s) agreed with the ` +
    `model${details.interrupted ? ` (stopped at the time bound of ${bound} ms)` : ""}${also}`
  );
}

function failure(
  p: Probe,
  collection: string,
  failed: { steps: Real["steps"]; error: unknown } | undefined,
  sequence: string,
): CheckOutcome {
  const reason = failed?.error instanceof Error ? failed.error.message : String(failed?.error);
  const steps = failed?.steps ?? [];
  const details = [`on ${collection}, the sequence ${sequence}, step by step:`];
  for (const { what, ex } of steps.slice(-STEPS_SHOWN)) {
    details.push(`${what}: ${p.describe(ex)}`);
    details.push(`  reproduce: ${(ex.on ?? p.target).curl(ex.req)}`);
  }
  if (steps.length > STEPS_SHOWN) details.splice(1, 0, `(the first ${steps.length - STEPS_SHOWN} steps not shown)`);
  return fail(reason, { counterexample: sequence, details });
}
