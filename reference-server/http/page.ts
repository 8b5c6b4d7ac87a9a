// A page of the message collection cut by its encoded bytes as well as by its count, so that no reply is larger
// than a bound whatever the messages hold (a body of `&` is five times its size in XML).
//
// A page is always made of whole results of the store's list, each starting where the previous one's cursor
// pointed, and its next link is the cursor after the last of them: so a message appears on exactly one page, as
// with pages cut by count, even while other clients write. When a result does not fit whole, the store is asked
// again from the same place for the messages that did fit; nothing is taken from a result it did not return whole.
import type { MessageFilter, MessageStore, StoredMessage } from "./store.js";

export interface PageBounds {
  /** Encoded bytes of messages a page holds at most, unless its one message is larger (then up to hardBytes). */
  softBytes: number;
  /** The largest message a reply carries; one larger is answered with ReplyTooLargeError. */
  hardBytes: number;
}

/** A page's messages, and the cursor of the page after it (absent on the last). */
export interface CutPage {
  messages: StoredMessage[];
  next?: string;
}

/** One message is larger than any reply may be. `next` is the cursor past it, when a listing reached it. */
export class ReplyTooLargeError extends Error {
  override readonly name = "ReplyTooLargeError";
  constructor(
    /** What is too large, as the client knows it: "message ID" or "this reply". */
    subject: string,
    readonly bytes: number,
    readonly bound: number,
    readonly next?: string,
  ) {
    super(
      `${subject} takes at least ${bytes} bytes in this representation, past the ${bound} bytes one reply may carry`,
    );
  }
}

/** How many messages the first read asks for: enough for a page of small messages in two reads, few of large ones. */
const FIRST_READ = 4;

export interface PageRequest {
  filter: MessageFilter;
  limit: number;
  cursor?: string;
}

/**
 * Reads one page. `measure` gives the bytes a message takes in the page, encoded; `separator` is what stands between
 * two. Reads are sized from the messages seen so far, so a page of large messages never fetches many more than it
 * keeps.
 */
export async function readPage(
  store: MessageStore,
  request: PageRequest,
  measure: (message: StoredMessage) => number,
  separator: number,
  bounds: PageBounds,
): Promise<CutPage> {
  const kept: StoredMessage[] = [];
  let bytes = 0;
  let at = request.cursor;
  // A result read again holds the same messages as before, mostly: each version is measured once.
  const sizes = new Map<string, number>();
  const measureOnce = (m: StoredMessage): number => {
    const key = `${m.id}/${m.version}`;
    let size = sizes.get(key);
    if (size === undefined) sizes.set(key, (size = measure(m)));
    return size;
  };
  let want = Math.min(request.limit, FIRST_READ);
  for (;;) {
    const got = await store.list(request.filter, { limit: want, ...(at !== undefined && { cursor: at }) });
    const fitted = fit(got.messages, kept.length, bytes, measureOnce, separator, bounds);
    if ("tooLarge" in fitted) {
      const past = await store.list(request.filter, { limit: 1, ...(at !== undefined && { cursor: at }) });
      throw new ReplyTooLargeError(`message ${fitted.tooLarge.id}`, fitted.bytes, bounds.hardBytes, past.next);
    }
    if (fitted.count < got.messages.length) {
      // Not the whole result: the page ends before it, or the part that fitted is read again as a whole result.
      if (fitted.count === 0) return { messages: kept, ...(at !== undefined && { next: at }) };
      want = fitted.count;
      continue;
    }
    kept.push(...got.messages);
    bytes = fitted.bytes;
    if (got.next === undefined) return { messages: kept };
    at = got.next;
    const left = request.limit - kept.length;
    if (left === 0 || bytes >= bounds.softBytes) return { messages: kept, next: at };
    const average = bytes / kept.length;
    want = Math.max(1, Math.min(left, Math.floor((bounds.softBytes - bytes) / average) + 1));
  }
}

type Fitted = { count: number; bytes: number } | { tooLarge: StoredMessage; bytes: number };

/** How many of `messages`, from the first, fit after `count` messages of `bytes`, encoded. */
function fit(
  messages: readonly StoredMessage[],
  count: number,
  bytes: number,
  measure: (m: StoredMessage) => number,
  separator: number,
  bounds: PageBounds,
): Fitted {
  let fitted = 0;
  for (const message of messages) {
    const first = count + fitted === 0;
    const room = first ? bounds.hardBytes : bounds.softBytes - bytes - separator;
    // Encoding never shrinks a body, and a string has at least as many UTF-8 bytes as UTF-16 units: a body whose
    // length alone is past the room is not measured, nor even scanned.
    if (message.body.length > room)
      return first ? { tooLarge: message, bytes: message.body.length } : { count: fitted, bytes };
    const size = measure(message);
    if (size > room) return first ? { tooLarge: message, bytes: size } : { count: fitted, bytes };
    fitted++;
    bytes += size + (first ? 0 : separator);
  }
  return { count: fitted, bytes };
}
