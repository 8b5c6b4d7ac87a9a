// grpc.errors.unknown-method: a method the service does not declare gets UNIMPLEMENTED.
import { unimplementedCheck } from "./_internals/unimplemented.js";

export const errorsUnknownMethod = unimplementedCheck(
  "grpc.errors.unknown-method",
  "/example.exampleService/NoSuchMethod",
  "§4.1 (one operation), gRPC statuscodes.md",
);
