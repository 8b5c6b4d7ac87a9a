// What one call of a load run came to, whatever the transport: its own file, so that the transports' callers and
// the driver that counts their results do not import each other.
export interface CallResult {
  code: number;
  details: string;
  reply?: Buffer;
  /** The server sent a grpc-status: an error it chose, not a connection that failed. */
  answered: boolean;
  /** The name errors are counted under, where the status code alone does not say it (an HTTP operation's). */
  label?: string;
}
