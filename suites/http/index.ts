// The HTTP rules suite: the static path rules on every discovered path, then the dynamic probes, in report order.
import type { CheckDefinition } from "../../harness/check.js";
import { authApiKey } from "./auth-api-key.js";
import { contentType415 } from "./content-type-415.js";
import { createLocation } from "./create-location.js";
import { createStatus201 } from "./create-status-201.js";
import { deleteThen404 } from "./delete-then-404.js";
import { errorsClientErrorClass } from "./errors-client-error-class.js";
import { errorsMalformed400 } from "./errors-malformed-400.js";
import { getNoPayload } from "./get-no-payload.js";
import { headMatchesGet } from "./head-matches-get.js";
import { listingNext } from "./listing-next.js";
import { maturity } from "./maturity.js";
import { methods405Allow } from "./methods-405-allow.js";
import { modelStateful } from "./model-stateful.js";
import { negotiationAccept } from "./negotiation-accept.js";
import { pathsCaseSensitive } from "./paths-case-sensitive.js";
import { pathsExtensionNotServed } from "./paths-extension-not-served.js";
import { pathsHierarchy } from "./paths-hierarchy.js";
import { pathsLowercase } from "./paths-lowercase.js";
import { pathsNoExtension } from "./paths-no-extension.js";
import { pathsNoTrailingSlash } from "./paths-no-trailing-slash.js";
import { pathsNoUnderscore } from "./paths-no-underscore.js";
import { pathsNouns } from "./paths-nouns.js";
import { pathsPluralCollections } from "./paths-plural-collections.js";
import { pathsTrailingSlashDistinct } from "./paths-trailing-slash-distinct.js";
import { readAfterCreate } from "./read-after-create.js";
import { statelessNoSession } from "./stateless-no-session.js";
import { statelessReplicas } from "./stateless-replicas.js";
import { statusReasonPhrase } from "./status-reason-phrase.js";
import { updatePut } from "./update-put.js";
import { xmlWellFormed } from "./xml-well-formed.js";

export const httpChecks: readonly CheckDefinition[] = [
  pathsLowercase,
  pathsNouns,
  pathsPluralCollections,
  pathsNoTrailingSlash,
  pathsNoUnderscore,
  pathsNoExtension,
  pathsHierarchy,
  createStatus201,
  createLocation,
  readAfterCreate,
  updatePut,
  deleteThen404,
  modelStateful,
  headMatchesGet,
  methods405Allow,
  pathsTrailingSlashDistinct,
  pathsExtensionNotServed,
  pathsCaseSensitive,
  getNoPayload,
  listingNext,
  negotiationAccept,
  xmlWellFormed,
  contentType415,
  errorsMalformed400,
  errorsClientErrorClass,
  statusReasonPhrase,
  authApiKey,
  statelessNoSession,
  statelessReplicas,
  maturity,
];
