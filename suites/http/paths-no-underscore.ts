// http.paths.no-underscore: names use hyphens, never underscores.
import { underscoreProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsNoUnderscore = pathRuleCheck(
  {
    id: "http.paths.no-underscore",
    title: "names use hyphens, never underscores",
    severity: "MUST",
    spec: "§4.2 rule 6",
  },
  underscoreProblem,
);
