// What replay and grpcurl lines show in place of a metadata value: the value may be a secret. Its own module so the
// option table (loaded by every command) does not load the runner for it.
export const METADATA_PLACEHOLDER = "<METADATA_VALUE>";
