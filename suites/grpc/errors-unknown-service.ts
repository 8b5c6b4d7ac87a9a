// grpc.errors.unknown-service: a service the server does not serve gets UNIMPLEMENTED.
import { unimplementedCheck } from "./_internals/unimplemented.js";

export const errorsUnknownService = unimplementedCheck(
  "grpc.errors.unknown-service",
  "/example.NoSuchService/Hello",
  "§4.1, gRPC statuscodes.md",
);
