// What an HTTP/1.1 exchange of wire/http1.ts comes back as, whichever client sent it (node:http, or undici for the
// pools that ask for it: _internals/undici-pool.ts): one shape, a failure a value. http1.ts exports these.

/**
 * Why an exchange brought no whole reply: its time ran out, the reply passed its byte bound, or the connection failed.
 */
export type Http1Failure =
  | { kind: "timeout" }
  | { kind: "too-large" }
  /** code: the system error's (ECONNREFUSED), where the connection failed before any reply. */
  | { kind: "connection"; message: string; code?: string };

/** What came back. Without a failure, the whole reply; with one, what arrived before it (status undefined: nothing). */
export interface Http1Answer {
  status?: number;
  /** The reason phrase exactly as the status line carried it. */
  statusText?: string;
  /** Every header field as sent, names lowercased, values in order. */
  headers: Record<string, string[]>;
  /** The body as sent (no content coding undone), at most the request's maxBytes. */
  body: Buffer;
  failure?: Http1Failure;
}

/**
 * Header fields from a client's raw list (name, value, name, value...: node:http's strings, undici's bytes, read as
 * latin1): names lowercased, every occurrence kept in order.
 */
export function headerLists(raw: readonly (string | Buffer)[]): Record<string, string[]> {
  const text = (v: string | Buffer) => (typeof v === "string" ? v : v.toString("latin1"));
  const out: Record<string, string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2)
    (out[text(raw[i] as string | Buffer).toLowerCase()] ??= []).push(text(raw[i + 1] as string | Buffer));
  return out;
}
