// The static path rules against golden cases: each case breaks exactly the rules it lists.
import { describe, expect, it } from "vitest";
import {
  extensionProblem,
  hierarchyProblem,
  lowercaseProblem,
  pluralProblem,
  templateOf,
  trailingSlashProblem,
  underscoreProblem,
  verbProblem,
  type PathShape,
  type PathWordOptions,
} from "../../../suites/http/_internals/path-rules.js";
import { idSegmentsOf } from "../../../suites/http/_internals/discovery.js";
import { loadLexicon } from "../../../suites/http/_internals/lexicon.js";
import { pathCases, wordCases, type RuleName } from "./path-rules.testdata.js";
import { resolvedWords } from "./path-words.js";

const words = resolvedWords();

const rules: Record<RuleName, (shape: PathShape, options: PathWordOptions) => string | undefined> = {
  lowercase: lowercaseProblem,
  nouns: (s, o) => verbProblem(s, o),
  plural: (s, o) => pluralProblem(s, o),
  trailingSlash: trailingSlashProblem,
  underscore: underscoreProblem,
  extension: extensionProblem,
  hierarchy: (s, o) => hierarchyProblem(s, o),
};

describe.each(pathCases)("$shape.path ($why)", ({ shape, mounts, breaks }) => {
  it(`breaks [${breaks.join(", ")}] and nothing else`, () => {
    const broken = (Object.keys(rules) as RuleName[]).filter(
      (r) => rules[r](shape, { ...words, ...(mounts && { mounts }) }) !== undefined,
    );
    expect(broken.sort()).toEqual([...breaks].sort());
  });
});

describe("the verb list and the allow-list", () => {
  it.each(wordCases)("$path: $why", ({ path, verbs, allow, breaks }) => {
    const shape: PathShape = { path, idSegments: idSegmentsOf(path, new Set(["1"])), kind: "unknown" };
    const problem = verbProblem(shape, resolvedWords({ ...(verbs && { verbs }), ...(allow && { allow }) }));
    expect(problem !== undefined).toBe(breaks);
  });
});

describe("reports", () => {
  it("shows ids as {id}, so that one breach is reported once for all items", () => {
    expect(templateOf({ path: "/messages/3f0c/reply", idSegments: [1], kind: "document" })).toBe(
      "/messages/{id}/reply",
    );
  });

  it("names the offending word", () => {
    expect(verbProblem({ path: "/messages/1/show", idSegments: [1], kind: "unknown" }, words)).toBe(
      'the path names an action: "show"',
    );
    expect(pluralProblem({ path: "/message/1", idSegments: [1], kind: "document" }, words)).toBe(
      'collection "message" is not a plural noun (messages?)',
    );
  });
});

describe("what a path does, where the interface shows it (rules 1 and 3)", () => {
  it(
    "judges a path that serves a listing a noun, whatever the lexicon says, and one that only takes POST an " +
      "action, whatever its word",
    async () => {
      const lexicon = await loadLexicon();
      const uploads = { path: "/messages/1/uploads", idSegments: [1], kind: "collection" } as const;
      // WordNet 3.1 knows upload only as a verb: a name read alone is an action.
      expect(verbProblem(uploads, { ...words, lexicon })).toBe('the path names an action: "uploads"');
      expect(verbProblem({ ...uploads, served: "listing" }, { ...words, lexicon })).toBeUndefined();
      // A verb the run names stays one, listing or not.
      expect(
        verbProblem(
          { path: "/messages/1/list", idSegments: [1], kind: "collection", served: "listing" },
          { ...words, lexicon },
        ),
      ).toBe('the path names an action: "list"');
      const archive = { path: "/messages/1/archive", idSegments: [1], kind: "unknown" } as const;
      expect(verbProblem(archive, { ...words, lexicon })).toBeUndefined();
      expect(verbProblem({ ...archive, served: "action" }, { ...words, lexicon })).toMatch(
        /^the path is an action: "archive" serves no representation/,
      );
    },
  );
});

describe("which segments hold an id (the spec shows no id format)", () => {
  it("takes ids the server used, template variables and segments with no letter; names stay names", () => {
    expect(idSegmentsOf("/messages/abc/reply", new Set(["abc"]))).toEqual([1]);
    expect(idSegmentsOf("/messages/%7Bid%7D/show", new Set())).toEqual([1]);
    expect(idSegmentsOf("/messages/42", new Set())).toEqual([1]);
    expect(idSegmentsOf("/messages/latest", new Set())).toEqual([]);
  });
});
