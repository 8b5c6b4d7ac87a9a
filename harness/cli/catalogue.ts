// What the CLI hands the engine from suites/: the catalogue of checks (and check-client's), and the verb lexicon's
// defaults. The one file of the CLI that imports the checks (the architecture test holds it so).
import type { CheckDefinition } from "../check.js";
import { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS } from "../../suites/http/_internals/path-rules.js";
import type { PathWords } from "../targets/http-target.js";

export { DEFAULT_ALLOWED_WORDS, DEFAULT_VERBS };
/** The catalogue's verb lexicon, handed to the engine beside the catalogue (RunOptions.pathWords). */
export const pathWords: PathWords = Object.freeze({ verbs: DEFAULT_VERBS, allowed: DEFAULT_ALLOWED_WORDS });
/**
 * The catalogue of checks, loaded when a command runs them, not with the CLI: its modules are most of a start
 * (check-command.ts loads them as the command runs).
 */
export const loadCatalogue = async (): Promise<readonly CheckDefinition[]> =>
  (await import("../../suites/index.js")).catalogue;
/** check-client's catalogue, loaded when that command runs: `check` never needs the client checks' modules. */
export const loadClientCatalogue = () => import("../../suites/client/index.js");
/** What loadClientCatalogue gives: the client checks, and the catalogue built for one client. */
export type ClientCatalogue = Awaited<ReturnType<typeof loadClientCatalogue>>;
