// One factory for the static path rules: each discovered path judged by a pure rule, each breach reported once per
// template.
import type { CheckDefinition } from "../../../harness/check.js";
import { discovery } from "./discovery.js";
import { loadLexicon } from "./lexicon.js";
import { templateOf, type PathShape, type PathWordOptions } from "./path-rules.js";
import { httpCheck, type HttpCheckSpec } from "./probe.js";
import { JSON_TYPE } from "./representation.js";

/** Paths named in a pass message; the rest are counted. */
const TEMPLATES_SHOWN = 50;

/** A rule that tells verbs from nouns is given the English lexicon (loaded on its first use, then kept). */
export function pathRuleCheck(
  spec: HttpCheckSpec,
  rule: (shape: PathShape, words: PathWordOptions) => string | undefined,
  needs: { lexicon?: boolean } = {},
): CheckDefinition {
  const check = httpCheck(spec, async (p) => {
    // The verb lexicon is the run's, given beside the checks: a run given none cannot tell verbs from nouns.
    const given = p.config.words;
    if (given === undefined)
      throw new Error("the run was given no verb lexicon for the path rules (pathWords beside the checks)");
    const found = await discovery(p.ctx);
    const words: PathWordOptions = {
      ...(needs.lexicon === true && { lexicon: await loadLexicon() }),
      verbs: given.verbs,
      allow: given.allowed,
      mounts: p.config.collections.map((c) => c.replace(/\/[^/]*$/, "")).filter((m) => m !== ""),
    };
    const reported = new Set<string>();
    for (const path of found.paths) {
      const problem = rule(path, words);
      const template = templateOf(path);
      if (problem === undefined || reported.has(template)) continue;
      reported.add(template);
      const concrete = !/\{[^}]*\}|%7B/i.test(path.path);
      // The request that shows the path: a GET of it when it is concrete, else of the page that offered it.
      const shownBy = concrete ? path.path : (path.foundOn ?? "/");
      p.problemAt(`${template}: ${problem} (found as ${path.source})`, {
        method: "GET",
        path: shownBy,
        headers: { accept: JSON_TYPE },
      });
    }
    for (const note of found.notes) p.note(note);
    const templates = [...new Set(found.paths.map(templateOf))];
    const shown = templates.slice(0, TEMPLATES_SHOWN).join(", ");
    return (
      `${templates.length} paths judged: ` +
      `${shown}${templates.length > TEMPLATES_SHOWN ? `, ... and ${templates.length - TEMPLATES_SHOWN} more` : ""}`
    );
  });
  if (needs.lexicon !== true) return check;
  // Reading the lexicon (about 6 MB, then a table of it) asks the target nothing: begun as the run starts, it goes on
  // while the checks ahead of this one wait on the target, not after them. A failure is the check's to report.
  return { ...check, prepare: (ctx) => void (ctx.http && loadLexicon().catch(() => undefined)) };
}
