// What the CLI hands the engine from suites/: the catalogue of checks (and check-client's), and the verb lexicon's
// defaults. The one file of the CLI that imports the checks (the architecture test holds it so).
export { catalogue } from "../../suites/index.js";
import { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS } from "../../suites/http/_internals/path-rules.js";
import type { PathWords } from "../targets/http-target.js";

export { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS };
/** The catalogue's verb lexicon, handed to the engine beside the catalogue (RunOptions.pathWords). */
export const pathWords: PathWords = Object.freeze({ verbs: DEFAULT_VERBS, allowed: DEFAULT_ALLOWED_WORDS });
export { clientCatalogue, clientChecks } from "../../suites/client/index.js";
