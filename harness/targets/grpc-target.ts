// The boundary between checks and a gRPC target: checks see only this interface.

export interface GrpcTarget {
  /** The address as the user gave it, for reports. */
  readonly address: string;
}
