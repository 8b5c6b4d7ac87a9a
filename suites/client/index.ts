// The client catalogue (check-client), in the order a run reports: each check judges one scenario's run of the client.
import type { CheckDefinition } from "../../harness/check.js";
import type { ClientUnderTest } from "../../harness/client-check/run-scenario.js";
import { apiKeyEachRequest } from "./api-key.js";
import { deadline } from "./deadline.js";
import { emptyReply } from "./empty-reply.js";
import { helloSucceeds } from "./hello-succeeds.js";
import { requestsValid } from "./requests-valid.js";
import { retryInvalidArgument } from "./retry-invalid-argument.js";
import { retryUnavailable } from "./retry-unavailable.js";
import { toDefinition, type ClientCheck } from "./_internals/client-check.js";
import { unknownFieldsBinary } from "./unknown-fields-binary.js";
import { unknownFieldsJson } from "./unknown-fields-json.js";

export type { ClientCheck } from "./_internals/client-check.js";

export const clientChecks: readonly ClientCheck[] = [
  helloSucceeds,
  requestsValid,
  unknownFieldsBinary,
  unknownFieldsJson,
  emptyReply,
  retryUnavailable,
  retryInvalidArgument,
  deadline,
  apiKeyEachRequest,
];

/** The client checks as the engine runs them, against this client. */
export function clientCatalogue(client: ClientUnderTest): CheckDefinition[] {
  return clientChecks.map((c) => toDefinition(c, client));
}
