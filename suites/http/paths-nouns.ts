// http.paths.nouns: no discovered path names an action: no CRUD verb or HTTP method name, and no word English uses only as a verb.
import { verbProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsNouns = pathRuleCheck(
  {
    id: "http.paths.nouns",
    title: "no discovered path names an action: no CRUD verb or HTTP method name among its words, and no word that English uses only as a verb (WordNet)",
    severity: "MUST",
    spec: "§4.2 rules 1 and 3",
  },
  (shape, words) => verbProblem(shape, words),
  { lexicon: true },
);
