// Rule 3 judged with the English lexicon on real public APIs' path segments: every one as expected, at 100 %.
import { describe, expect, it } from "vitest";
import { loadLexicon } from "../../../suites/http/_internals/lexicon.js";
import { verbProblem } from "../../../suites/http/_internals/path-rules.js";
import { apiSegments } from "./api-segments.testdata.js";
import { resolvedWords } from "./path-words.js";

describe("http.paths.nouns on real API path segments", () => {
  it("holds at least 200 segments, each with its source", () => {
    expect(apiSegments.length).toBeGreaterThanOrEqual(200);
    for (const s of apiSegments) expect(s.source).not.toBe("");
  });

  it("judges every segment as expected: only-verbs and rule 3's words fail, nouns that are also verbs pass", async () => {
    const lexicon = await loadLexicon();
    const wrong = apiSegments
      .filter(
        (s) =>
          (verbProblem({ path: `/${s.segment}`, idSegments: [], kind: "unknown" }, { ...resolvedWords(), lexicon }) ===
          undefined
            ? "noun"
            : "verb") !== s.expected,
      )
      .map((s) => `${s.segment} (${s.source}): expected ${s.expected}`);
    expect(wrong).toEqual([]);
  });

  it(
    "keeps --verbs and --allow-word: a listed word fails, an allowed one passes even when English has it only as a " +
      "verb",
    async () => {
      const lexicon = await loadLexicon();
      const judge = (path: string, o: { verbs?: string[]; allow?: string[] }) =>
        verbProblem({ path, idSegments: [], kind: "unknown" }, { ...resolvedWords(o), lexicon });
      expect(judge("/archive", { verbs: ["archive"] })).toBe('the path names an action: "archive"');
      expect(judge("/publish", { allow: ["publish"] })).toBeUndefined();
      expect(judge("/publish", {})).toBe('the path names an action: "publish"');
    },
  );
});
