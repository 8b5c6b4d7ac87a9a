// The path rules' words as a run resolves them: the CLI's lexicon under the user's --verbs and --allow-word, through
// the run's own resolving function (the rules have no list of their own).
import { pathWords } from "../../../harness/cli/catalogue.js";
import { resolveHttpRun } from "../../../harness/run-config.js";
import type { PathWordOptions } from "../../../suites/http/_internals/path-rules.js";

export function resolvedWords(
  given: { verbs?: readonly string[]; allow?: readonly string[] } = {},
): Pick<PathWordOptions, "verbs" | "allow"> {
  const run = resolveHttpRun(
    {
      baseUrl: "http://127.0.0.1:1",
      ...(given.verbs && { verbs: given.verbs }),
      ...(given.allow && { allowWords: given.allow }),
    },
    undefined,
    pathWords,
  );
  if (run.words === undefined) throw new Error("the resolved run carries no words");
  return { verbs: run.words.verbs, allow: run.words.allowed };
}
