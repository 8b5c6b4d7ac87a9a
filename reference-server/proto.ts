// The contract as grpc-js sees it: one proto-loader options constant shared by the server, reflection and tests.
import * as protoLoader from "@grpc/proto-loader";
import { CONTRACT_FILE } from "../common/paths.js";

/** Field names as written in the .proto, defaults filled in, 64-bit numbers and enums as strings. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

export const SERVICE_NAME = "example.exampleService";

export function loadContract(file: string = CONTRACT_FILE): protoLoader.PackageDefinition {
  return protoLoader.loadSync(file, LOADER_OPTIONS);
}
