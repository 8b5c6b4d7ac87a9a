// http.paths.no-extension: no discovered path carries a file extension.
import { extensionProblem } from "./_internals/path-rules.js";
import { pathRuleCheck } from "./_internals/static-rule.js";

export const pathsNoExtension = pathRuleCheck(
  {
    id: "http.paths.no-extension",
    title: "no discovered path carries a file extension",
    severity: "MUST",
    spec: "§4.2 rule 8",
  },
  extensionProblem,
);
