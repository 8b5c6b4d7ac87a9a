// What the server owes its clients: bytes of replies it has produced that the client has not yet taken (queued in
// the process on an HTTP/1.1 connection or an HTTP/2 stream because the peer does not read, or keeps its
// flow-control window shut). Memory held for one client is bounded by this, not by what was admitted: a connection
// that owes past its share is given no new work until it reads, one that makes no progress is closed, and while
// the whole process owes past its budget only connections that owe nothing are given new work.
//
// Over HTTP/2 a call whose reply is unread also holds its request (grpc-js keeps it until the call ends), so the
// gRPC guard counts those bytes too; and so are the bytes of a request not yet whole (grpc-js keeps them until it
// is), which a client can leave half-sent as it can leave a reply unread. startReferenceServer makes one ledger and
// gives it to both interfaces: they share the process's memory.

import { validateLimits } from "./protection.js";

export interface OwedLimits {
  /** Reply bytes one connection may owe before it is given no new work until it reads. */
  perConnectionBytes: number;
  /** Reply bytes the whole process may owe; past it, only connections that owe nothing are given new work. */
  totalBytes: number;
  /**
   * A connection (or HTTP/2 stream) that owes bytes and takes none of them for this long is closed (reset); so is an
   * HTTP/2 stream whose request gets no more bytes for this long before it is whole.
   */
  stallMs: number;
  /**
   * A request must arrive whole within this from its start, however steadily its bytes come: an HTTP/1.1 request's
   * headers and body (else 408 and the connection closed), a gRPC unary call's request to its end and a streamed
   * call's message under way from its first byte (else the stream is reset). Without it, a client that sends one
   * byte every little under stallMs would hold its request, and the bytes counted for it, for ever.
   */
  arrivalMs: number;
}

export const DEFAULT_OWED_LIMITS: Readonly<OwedLimits> = Object.freeze({
  perConnectionBytes: 16 * 1024 * 1024,
  totalBytes: 256 * 1024 * 1024,
  stallMs: 10_000,
  arrivalMs: 30_000,
});

/** One connection's (or stream's) debt. */
export interface OwedAccount {
  /** Reply bytes queued for the client. */
  owe(bytes: number): void;
  /** Bytes the client took (handed to the kernel, or sent in DATA frames). */
  paid(bytes: number): void;
  /** Bytes owed now. */
  owed(): number;
  /** The connection ended: what it owed is owed no longer. Idempotent. */
  close(): void;
}

export interface OwedLedger {
  /** A new account, for a connection or stream just opened. */
  open(): OwedAccount;
  /** Bytes owed by every open account together. */
  total(): number;
  /** Why the connection holding `account` may not be given new work now, or undefined to give it. */
  refuse(account: OwedAccount | undefined): string | undefined;
  readonly limits: Readonly<OwedLimits>;
}

export function createOwedLedger(limits: Partial<OwedLimits> = {}): OwedLedger {
  const resolved = Object.freeze(validateLimits<OwedLimits>({ ...DEFAULT_OWED_LIMITS, ...limits }));
  let total = 0;
  return {
    limits: resolved,
    total: () => total,
    open(): OwedAccount {
      let owed = 0;
      let open = true;
      return {
        owe(bytes) {
          if (!open || bytes <= 0) return;
          owed += bytes;
          total += bytes;
        },
        paid(bytes) {
          if (!open || bytes <= 0) return;
          const n = Math.min(bytes, owed);
          owed -= n;
          total -= n;
        },
        owed: () => owed,
        close() {
          if (!open) return;
          open = false;
          total -= owed;
          owed = 0;
        },
      };
    },
    refuse(account) {
      const owed = account?.owed() ?? 0;
      if (owed >= resolved.perConnectionBytes) return `this connection holds ${owed} bytes for replies it has not read`;
      if (total >= resolved.totalBytes && owed > 0)
        return `the server holds ${total} bytes for replies its clients have not read`;
      return undefined;
    },
  };
}
