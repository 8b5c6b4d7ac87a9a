// http.paths.nouns: no discovered path names an action: no CRUD verb or HTTP method name among its words.
import { verbProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsNouns = pathRuleCheck(
  {
    id: "http.paths.nouns",
    title: "no discovered path names an action: no CRUD verb or HTTP method name among its words",
    severity: "MUST",
    spec: "§4.2 rules 1 and 3",
  },
  (shape, words) => verbProblem(shape, words),
);
