// http.paths.no-trailing-slash: no discovered path ends with a slash.
import { trailingSlashProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsNoTrailingSlash = pathRuleCheck(
  {
    id: "http.paths.no-trailing-slash",
    title: "no discovered path ends with a slash",
    severity: "MUST",
    spec: "§4.2 rule 5",
  },
  trailingSlashProblem,
);
