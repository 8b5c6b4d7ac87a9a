// The catalogue: every check, in the order a run reports them.
import type { CheckDefinition } from "../harness/check.js";
import { contractGoPackage } from "./contract/go-package.js";
import { contractLint } from "./contract/lint.js";
import { contractReflectionMatch } from "./contract/reflection-match.js";
import { contractShape } from "./contract/shape.js";
import { compatUnknownFields } from "./grpc/compat-unknown-fields.js";
import { deadlineRespected } from "./grpc/deadline-respected.js";
import { defaultsDecodes } from "./grpc/defaults-decodes.js";
import { defaultsExplicitEmpty } from "./grpc/defaults-explicit-empty.js";
import { defaultsOmitted } from "./grpc/defaults-omitted.js";
import { encodingAcceptEncoding } from "./grpc/encoding-accept-encoding.js";
import { encodingFlagWithoutEncoding } from "./grpc/encoding-flag-without-encoding.js";
import { encodingGzip } from "./grpc/encoding-gzip.js";
import { errorsMalformedRequest } from "./grpc/errors-malformed-request.js";
import { goldenCheck, loadGoldenCases } from "./grpc/golden.js";
import { httpContentType } from "./grpc/http-content-type.js";
import { limitsLargeMessage } from "./grpc/limits-large-message.js";
import { limitsOverLimit } from "./grpc/limits-over-limit.js";
import { metadataAccepted } from "./grpc/metadata-accepted.js";
import { metadataBinBase64 } from "./grpc/metadata-bin-base64.js";
import { statelessConnectionIndependent } from "./grpc/stateless-connection-independent.js";
import { statelessDeterministic } from "./grpc/stateless-deterministic.js";
import { statelessHistoryIndependent } from "./grpc/stateless-history-independent.js";
import { statelessMetadataIsolated } from "./grpc/stateless-metadata-isolated.js";
import { statelessReplicas } from "./grpc/stateless-replicas.js";
import { stringsInvalidUtf8 } from "./grpc/strings-invalid-utf8.js";
import { stringsUnicode } from "./grpc/strings-unicode.js";
import { timeoutMalformed } from "./grpc/timeout-malformed.js";
import { trailersStatus } from "./grpc/trailers-status.js";
import { unaryCardinality } from "./grpc/unary-cardinality.js";
import { unarySingleResponse } from "./grpc/unary-single-response.js";
import { connectErrorJsonShape } from "./connect/error-json-shape.js";
import { connectErrorHttpStatus } from "./connect/error-http-status.js";
import { connectGet } from "./connect/get.js";
import { connectUnaryContentType } from "./connect/unary-content-type.js";
import { grpcWebContentType } from "./grpc-web/content-type.js";
import { grpcWebTrailersInBody } from "./grpc-web/trailers-in-body.js";
import { httpChecks } from "./http/index.js";
import { crossProtocolEquivalent } from "./rpc/cross-protocol-equivalent.js";

/** The golden cases by ID: those that were checks of code keep their place in the order below. */
const golden = new Map(
  loadGoldenCases()
    .map(goldenCheck)
    .map((check) => [check.id, check]),
);
function goldenCase(id: string): CheckDefinition {
  const check = golden.get(id);
  if (!check) throw new Error(`fixtures/golden/grpc: no case has the ID ${id}`);
  golden.delete(id);
  return check;
}

export const contractChecks: readonly CheckDefinition[] = [contractShape, contractGoPackage, contractLint];

/** Contract-profile gRPC checks first (what the implementer controls), then the protocol profile. */
export const grpcChecks: readonly CheckDefinition[] = [
  // The shape of one exchange first: when it is wrong, its precise reason is the first thing reported.
  unarySingleResponse,
  goldenCase("grpc.defaults.empty-request"),
  defaultsExplicitEmpty,
  defaultsDecodes,
  statelessDeterministic,
  statelessHistoryIndependent,
  statelessConnectionIndependent,
  statelessMetadataIsolated,
  statelessReplicas,
  compatUnknownFields,
  stringsUnicode,
  goldenCase("grpc.errors.unknown-method"),
  goldenCase("grpc.errors.unknown-service"),
  limitsLargeMessage,
  metadataAccepted,
  contractReflectionMatch,
  defaultsOmitted,
  stringsInvalidUtf8,
  errorsMalformedRequest,
  limitsOverLimit,
  deadlineRespected,
  encodingGzip,
  goldenCase("grpc.encoding.unsupported"),
  encodingAcceptEncoding,
  encodingFlagWithoutEncoding,
  trailersStatus,
  httpContentType,
  metadataBinBase64,
  timeoutMalformed,
  unaryCardinality,
  // The rest of the golden cases, in the order of their files.
  ...golden.values(),
];

/** The wire rules of the protocols beside gRPC: each applies to its own protocol only. */
export const rpcProtocolChecks: readonly CheckDefinition[] = [
  crossProtocolEquivalent,
  connectUnaryContentType,
  connectErrorJsonShape,
  connectErrorHttpStatus,
  connectGet,
  grpcWebContentType,
  grpcWebTrailersInBody,
];

export { httpChecks };

export const catalogue: readonly CheckDefinition[] = [
  ...contractChecks,
  ...grpcChecks,
  ...rpcProtocolChecks,
  ...httpChecks,
];
