// http.paths.plural-collections: collections are named by plural nouns and documents by singular ones.
import { pluralProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsPluralCollections = pathRuleCheck(
  {
    id: "http.paths.plural-collections",
    title: "collections are named by plural nouns and documents by singular ones",
    severity: "MUST",
    spec: "§4.2 rule 2",
  },
  (shape, options) => pluralProblem(shape, options),
  { lexicon: true },
);
