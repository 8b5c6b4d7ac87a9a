// `load --http`: a mix of resource operations on messages each slot creates itself, over HTTP/1.1 keep-alive
// connections. Every read is compared with what that slot last wrote (the server is stateless: a message read on
// any connection is the one last written); at the end, what a slot created and did not delete is read back once
// more and deleted.
import { Status } from "../../protocols/rpc.js";
import type { CallResult } from "./call-result.js";
import { boundedExchange, openPool, type BoundedReply, type HttpWire } from "./http-rpc-call.js";

export const MIX_OPERATIONS = ["create", "read", "list", "update", "delete"] as const;
export type MixOperation = (typeof MIX_OPERATIONS)[number];
export type Mix = Readonly<Record<MixOperation, number>>;

export const DEFAULT_MIX: Mix = { create: 1, read: 8, list: 1, update: 1, delete: 1 };

/** Messages one slot holds at once: past it, a create deletes instead, so a long run stores a bounded number. */
const MAX_HELD = 64;

type Reply = BoundedReply;

/** The weighted sequence of operations, spread out (8 reads are not 8 in a row): one entry per unit of weight. */
export function mixSequence(mix: Mix): MixOperation[] {
  const total = MIX_OPERATIONS.reduce((n, op) => n + mix[op], 0);
  const credit = Object.fromEntries(MIX_OPERATIONS.map((op) => [op, 0])) as Record<MixOperation, number>;
  const out: MixOperation[] = [];
  for (let k = 0; k < total; k++) {
    // Smooth weighted round robin: each step every operation earns its weight, and the richest is spent.
    for (const op of MIX_OPERATIONS) credit[op] += mix[op];
    const next = MIX_OPERATIONS.reduce((a, b) => (credit[b] > credit[a] ? b : a));
    credit[next] -= total;
    out.push(next);
  }
  return out;
}

const shedding = (r: Reply) => r.status === 429 || (r.status === 503 && r.headers["retry-after"] !== undefined);

export interface ResourceCounts {
  compared: number;
  mismatches: number;
  example?: string;
  created: number;
  leftBehind: number;
}

export interface ResourceCaller {
  call(w: number, k: number): Promise<CallResult>;
  /**
   * Reads back and deletes what the slots still hold (bounded by the timeout per call), then closes the connections.
   */
  finish(): Promise<ResourceCounts>;
}

/** What every call of one resource caller shares: where, over which pool, its bound, and what it counted. */
interface Resources {
  collection: URL;
  pool: ReturnType<typeof openPool>;
  timeoutMs: number;
  wire: HttpWire;
  counts: ResourceCounts;
  /** Numbers the bodies the run writes, so that each is its own. */
  serial: number;
}

export function resourceCaller(
  collectionUrl: string,
  mix: Mix,
  concurrency: number,
  connections: number,
  timeoutMs: number,
  wire: HttpWire = {},
): ResourceCaller {
  const collection = new URL(collectionUrl);
  const res: Resources = {
    collection,
    pool: openPool(collection, connections, wire),
    timeoutMs,
    wire,
    counts: { compared: 0, mismatches: 0, created: 0, leftBehind: 0 },
    serial: 0,
  };
  const sequence = mixSequence(mix);
  /** Per slot: each message it holds, by its path, with the body it last wrote. */
  const held = Array.from({ length: concurrency }, () => new Map<string, string>());
  return {
    async call(w, k) {
      const mine = held[w] as Map<string, string>;
      // Slot w's own n-th call takes the sequence's next step (k counts every slot's calls, w apart).
      const n = Math.floor(k / concurrency);
      let op = sequence[(n + w) % sequence.length] as MixOperation;
      // Nothing of its own to read, update or delete yet: it creates; at its bound it deletes instead.
      if (op !== "list" && op !== "create" && mine.size === 0) op = "create";
      if (op === "create" && mine.size >= MAX_HELD) op = "delete";
      if (op === "create") return create(res, mine, w);
      if (op === "list") return outcome("list", await send(res, "GET", collection.pathname), (x) => x.status === 200);
      const [path, last] = [...mine.entries()][k % mine.size] as [string, string];
      if (op === "read") return read(res, path, last);
      if (op === "update") return update(res, mine, w, path);
      const r = await send(res, "DELETE", path);
      const result = outcome("delete", r, (x) => x.status >= 200 && x.status < 300);
      if (result.code === Status.OK || (typeof r !== "string" && r.status === 404)) mine.delete(path);
      return result;
    },
    async finish() {
      // What the run created, it reads back once more (the last write of each, after the load: a run too short for a
      // slot to read under load still judges statelessness) and deletes: slot by slot, side by side, each call
      // bounded by the timeout.
      await Promise.all(
        held.map(async (mine) => {
          for (const [path, last] of [...mine.entries()]) {
            await readBack(res, path, last);
            const r = await send(res, "DELETE", path);
            if (typeof r === "string" || r.status >= 300) res.counts.leftBehind++;
          }
          mine.clear();
        }),
      );
      res.pool.close();
      return res.counts;
    },
  };
}

function send(res: Resources, method: string, path: string, body?: string): Promise<Reply | string> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify({ body }));
  const headers: Record<string, string> = {
    accept: "application/json",
    ...(payload && { "content-type": "application/json", "content-length": String(payload.length) }),
  };
  return boundedExchange(res.pool, res.collection, method, path, headers, payload, res.timeoutMs, res.wire);
}

function outcome(op: MixOperation, r: Reply | string, ok: (r: Reply) => boolean): CallResult {
  if (typeof r === "string") return { code: Status.UNAVAILABLE, details: r, answered: false, label: `${op}: no reply` };
  if (shedding(r))
    return { code: Status.RESOURCE_EXHAUSTED, details: `HTTP ${r.status}`, answered: true, label: `HTTP ${r.status}` };
  return ok(r)
    ? { code: Status.OK, details: "", answered: true }
    : { code: Status.UNKNOWN, details: `HTTP ${r.status}`, answered: true, label: `${op} HTTP ${r.status}` };
}

async function create(res: Resources, mine: Map<string, string>, w: number): Promise<CallResult> {
  const body = `load ${w} ${res.serial++}`;
  const r = await send(res, "POST", res.collection.pathname, body);
  const result = outcome("create", r, (x) => x.status >= 200 && x.status < 300);
  if (typeof r === "string" || result.code !== Status.OK) return result;
  const location = r.headers.location?.[0] ?? r.headers["content-location"]?.[0];
  if (typeof location !== "string")
    return { code: Status.UNKNOWN, details: "no Location", answered: true, label: "create: no Location" };
  const path = new URL(location, res.collection).pathname;
  mine.set(path, body);
  res.counts.created++;
  return result;
}

/** Reads a message the slot holds and compares its body with the one the slot last wrote. */
async function read(res: Resources, path: string, last: string): Promise<CallResult> {
  const r = await send(res, "GET", path);
  const result = outcome("read", r, (x) => x.status === 200);
  if (typeof r === "string" || result.code !== Status.OK) return result;
  let body: unknown;
  try {
    body = (JSON.parse(r.body.toString("utf8")) as { body?: unknown }).body;
  } catch {
    body = undefined;
  }
  const { counts } = res;
  counts.compared++;
  if (body !== last) {
    counts.mismatches++;
    counts.example ??=
      `GET ${path}: last written ${JSON.stringify(last)}, read ` +
      `${JSON.stringify(body)?.slice(0, 200) ?? "no body field"}`;
  }
  return result;
}

/**
 * The closing read of a message a slot wrote and did not delete: compared as any read, and an answer other than 200
 * (a 404: the write was lost) counted as a mismatch, not as a load error, since the load is over.
 */
async function readBack(res: Resources, path: string, last: string): Promise<void> {
  const result = await read(res, path, last);
  if (result.code !== Status.UNKNOWN) return;
  res.counts.compared++;
  res.counts.mismatches++;
  res.counts.example ??= `GET ${path} after the run: ${result.details}, last written ${JSON.stringify(last)}`;
}

async function update(res: Resources, mine: Map<string, string>, w: number, path: string): Promise<CallResult> {
  const body = `load ${w} ${res.serial++}`;
  const r = await send(res, "PUT", path, body);
  const result = outcome("update", r, (x) => x.status >= 200 && x.status < 300);
  if (result.code === Status.OK) mine.set(path, body);
  return result;
}

/** Parses `create=1,read=8,list=1,update=1,delete=1` (missing operations weigh 0). */
export function parseMix(text: string): Mix {
  const mix: Record<MixOperation, number> = { create: 0, read: 0, list: 0, update: 0, delete: 0 };
  for (const part of text.split(",")) {
    const m = /^\s*(create|read|list|update|delete)\s*=\s*(\d{1,3})\s*$/.exec(part);
    if (!m)
      throw new Error(
        `${JSON.stringify(part)} is not op=weight (operations: ${MIX_OPERATIONS.join(", ")}; weights 0-999)`,
      );
    mix[m[1] as MixOperation] = Number(m[2]);
  }
  if (mix.create === 0)
    throw new Error("the mix needs create above 0: every other operation works on messages the run creates");
  return mix;
}
