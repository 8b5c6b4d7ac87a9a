// http.paths.nouns: no discovered path names an action: no CRUD verb or HTTP method name, no word English uses only as
// a verb (unless the path serves a listing: a collection's name is a noun), and no path that only takes POST.
import { verbProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsNouns = pathRuleCheck(
  {
    id: "http.paths.nouns",
    title:
      "no discovered path names an action: no CRUD verb or HTTP method name among its words, no word that " +
      "English uses only as a verb (WordNet) unless the path serves a listing, and no path that serves no " +
      "representation and answers only POST",
    severity: "MUST",
    spec: "§4.2 rules 1 and 3",
  },
  (shape, words) => verbProblem(shape, words),
  { lexicon: true },
);
