// How much of a target's reply the harness reads, at most, written once for every transport: what bounds its memory
// whatever the target sends (docs/reliability.md: a run's peak RSS stays under 512 MiB with checks side by side).

/**
 * Largest reply message (decompressed) or reply body a check reads over gRPC, Connect or gRPC-Web: twice gRPC's
 * default receive limit, above every reply a check asks for (the largest request a check sends is 4 MiB).
 * Past it the call ends RESOURCE_EXHAUSTED (or, on the wire-level client, as a failed exchange), never a larger buffer.
 */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024;

/**
 * Bound on a decompressed gRPC message that a wire check inflates itself: 4 MiB, gRPC's default receive limit
 * (what any client refuses past unless told otherwise).
 */
export const MAX_INFLATED_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * An HTTP resource's response body past this is cut off (after each content coding is undone as well): a
 * conformance probe never needs more, and a hostile target cannot fill memory.
 */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Largest reply a load run reads: no Hello reply and no resource comes near it, and a run holds one per call in
 * flight (thousands), so it is an eighth of a check's.
 */
export const MAX_LOAD_REPLY_BYTES = 1024 * 1024;

/** Largest response head (status line and header fields) read over HTTP/1.1: Node's default, written down. */
export const MAX_HEADER_BYTES = 16 * 1024;
