// http.paths.hierarchy: levels alternate /<resource>/<id>/<related>: no path opens with an id, and no two names or ids
// follow each other.
import { hierarchyProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsHierarchy = pathRuleCheck(
  {
    id: "http.paths.hierarchy",
    title:
      "levels alternate /<resource>/<id>/<related>: no path opens with an id, and no two names or ids follow " +
      "each other",
    severity: "MUST",
    spec: "§4.2 rules 4, 9 and 10",
  },
  (shape, options) => hierarchyProblem(shape, options),
  { lexicon: true },
);
