// http.paths.lowercase: every discovered path is lowercase.
import { lowercaseProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsLowercase = pathRuleCheck(
  {
    id: "http.paths.lowercase",
    title: "every discovered path is lowercase",
    severity: "MUST",
    spec: "§4.2 rules 1 and 7",
  },
  lowercaseProblem,
);
