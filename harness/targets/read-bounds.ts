// How much of a target's reply the harness reads, at most: what bounds its memory whatever the target sends
// (docs/reliability.md: a run's peak RSS stays under 512 MiB with checks side by side).

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
