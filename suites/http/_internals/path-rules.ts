// The static rules of part 4.2 as pure functions over a discovered path: each returns what is wrong, or nothing.
import pluralize from "pluralize";
import type { Lexicon } from "./lexicon.js";

/** A path as discovery saw it: the concrete spelling, which segments hold an id, and what it names. */
export interface PathShape {
  /** As the server spelled it, relative to the base URL, without query: "/messages/3f0c/reply". */
  path: string;
  /** Indexes (into the non-empty segments) of segments that hold a resource's identifier (rule 9). */
  idSegments: readonly number[];
  /** What a GET of it showed (or the OpenAPI document says): a collection, a document, or not known. */
  kind: "collection" | "document" | "unknown";
  /**
   * What the path did when discovery fetched it, where that tells a noun from an action whatever the dictionary
   * says: "listing", a GET showed a listing (a collection is named by a noun); "action", it serves no
   * representation and answers only POST (GET answered 405 with Allow naming POST and nothing that reads or changes).
   */
  served?: "listing" | "action";
}

export interface PathWordOptions {
  /** Words that name an action: the run's, as it was given them (the CLI gives the list below unless --verbs). */
  verbs: readonly string[];
  /**
   * Words that look like verbs but are nouns in this interface: the run's (the CLI gives the list below and
   * --allow-word).
   */
  allow: readonly string[];
  /**
   * Static prefixes the collections are mounted under ("/api", "/v1"): versioning and mounting are not shown
   * (part 9), so the levels before a collection are not judged as a hierarchy.
   */
  mounts?: readonly string[];
  /**
   * An English lexicon: a word that is only ever a verb names an action, whatever the list says ("publish",
   * "subscribe"); a noun that is also a verb ("replies", "reports") does not. Without it only the list judges.
   */
  lexicon?: Lexicon;
}

/** The CRUD verbs rule 3 names, their common synonyms, and every HTTP method name. */
export const DEFAULT_VERBS: readonly string[] = [
  // HTTP methods
  "get",
  "head",
  "post",
  "put",
  "patch",
  "delete",
  "options",
  "trace",
  "connect",
  // CRUD verbs and the synonyms seen in paths
  "create",
  "read",
  "update",
  "insert",
  "show",
  "list",
  "add",
  "remove",
  "edit",
  "modify",
  "change",
  "set",
  "fetch",
  "retrieve",
  "save",
  "destroy",
  "erase",
  "replace",
  "upsert",
  "new",
  "view",
  "do",
  "make",
  "execute",
  "run",
  "call",
  "send",
  "submit",
  "search",
  "find",
  "lookup",
  "query",
];

/**
 * Method names that are also everyday nouns of an interface ("/products/{id}/options"), and nouns of software
 * English that WordNet 3.1 knows only as verbs ("/repos/{owner}/{repo}/commits").
 */
export const DEFAULT_ALLOWED_WORDS: readonly string[] = ["options", "commit"];

/** Extensions a path might carry to pick a representation, which rule 8 leaves to Accept. */
const EXTENSION = /\.(json|xml|html?|txt|csv|ya?ml|php|aspx?|jsp|cgi|pl|js|atom|rss|[a-z][a-z0-9]{0,4})$/i;

export interface Segment {
  text: string;
  isId: boolean;
}

export function segmentsOf(shape: PathShape): Segment[] {
  const parts = shape.path.split("/").filter((s) => s !== "");
  return parts.map((text, i) => ({ text: safeDecode(text), isId: shape.idSegments.includes(i) }));
}

/** The path with each id segment shown as {id}: the form reports use, so one rule breach is reported once. */
export function templateOf(shape: PathShape): string {
  const segs = segmentsOf(shape);
  const body = segs.map((s) => (s.isId ? "{id}" : s.text)).join("/");
  return `/${body}${shape.path.length > 1 && shape.path.endsWith("/") ? "/" : ""}`;
}

const literals = (shape: PathShape) => segmentsOf(shape).filter((s) => !s.isId);

/** Rules 1 and 7: lowercase letters only in the names (an id is the server's to spell). */
export function lowercaseProblem(shape: PathShape): string | undefined {
  const bad = literals(shape).filter((s) => s.text !== s.text.toLowerCase());
  return bad.length === 0 ? undefined : `uppercase letters in ${bad.map((s) => JSON.stringify(s.text)).join(", ")}`;
}

/** Words of a name: rule 3 splits on hyphens (and the slash already split segments). */
export function wordsOf(name: string): string[] {
  return name
    .toLowerCase()
    .split(/[-_.]/)
    .filter((w) => w !== "");
}

function verbsOf(options: PathWordOptions): (word: string) => boolean {
  const verbs = new Set(options.verbs.map((v) => v.toLowerCase()));
  const allowed = new Set(options.allow.map((v) => v.toLowerCase()));
  const lexicon = options.lexicon;
  // An allowed noun is allowed in the plural too ("commit", "/commits").
  return (word) =>
    !allowed.has(word) &&
    (verbs.has(word) || (lexicon !== undefined && !allowed.has(pluralize.singular(word)) && lexicon.isVerbOnly(word)));
}

/** A name with a verb among its words: rule 3's to report, so the other rules do not judge it as a noun too. */
function namesAnAction(seg: Segment, options: PathWordOptions): boolean {
  const isVerb = verbsOf(options);
  return !seg.isId && wordsOf(seg.text).some(isVerb);
}

/**
 * Rules 1 and 3: no word of a name is a verb or an HTTP method name, and no path does only what an action does.
 * Behaviour decides where the interface shows it: the last name of a path that serves a listing is a noun (the
 * lexicon is not asked; the verbs the run names still are), and a path that serves no representation and
 * answers only POST names an action, whatever its word.
 */
export function verbProblem(shape: PathShape, options: PathWordOptions): string | undefined {
  const isVerb = verbsOf(options);
  const named = new Set(options.verbs.map((v) => v.toLowerCase()));
  const segs = segmentsOf(shape);
  const last = segs[segs.length - 1];
  const found: string[] = [];
  for (const seg of segs.filter((s) => !s.isId)) {
    const listed = seg === last && shape.served === "listing";
    for (const word of wordsOf(seg.text)) if (listed ? named.has(word) : isVerb(word)) found.push(word);
  }
  if (found.length > 0)
    return `the path names an action: ${[...new Set(found)].map((w) => JSON.stringify(w)).join(", ")}`;
  if (shape.served === "action" && last !== undefined && !last.isId) {
    return (
      `the path is an action: ${JSON.stringify(last.text)} serves no representation (GET answered 405 Method Not ` +
      `Allowed) and its Allow names POST alone`
    );
  }
  return undefined;
}

/**
 * Rule 2: a name followed by an id, or a path that lists items, names a collection (plural); the last name of a
 * document is singular. Names whose role is not known are not judged. Uncountable nouns are both.
 */
export function pluralProblem(shape: PathShape, options: PathWordOptions): string | undefined {
  const segs = segmentsOf(shape);
  const problems: string[] = [];
  segs.forEach((seg, i) => {
    if (seg.isId || namesAnAction(seg, options)) return;
    const next = segs[i + 1];
    const last = i === segs.length - 1;
    const role = next?.isId ? "collection" : last ? shape.kind : "unknown";
    if (role === "unknown") return;
    // The noun is the name's last word, an extension aside (rule 8 reports that one).
    const words = wordsOf(seg.text.replace(EXTENSION, ""));
    const noun = words[words.length - 1];
    if (noun === undefined || /^[0-9]+$/.test(noun)) return;
    if (role === "collection" && !pluralize.isPlural(noun))
      problems.push(`collection ${JSON.stringify(seg.text)} is not a plural noun (${pluralize.plural(noun)}?)`);
    if (role === "document" && !pluralize.isSingular(noun))
      problems.push(`document ${JSON.stringify(seg.text)} is not a singular noun (${pluralize.singular(noun)}?)`);
  });
  return problems.length === 0 ? undefined : problems.join("; ");
}

/** Rule 5: no trailing slash (the root "/" is the one path that is only a slash). */
export function trailingSlashProblem(shape: PathShape): string | undefined {
  return shape.path.length > 1 && shape.path.endsWith("/") ? "the path ends with a slash" : undefined;
}

/** Rule 6: hyphens, not underscores, in names. */
export function underscoreProblem(shape: PathShape): string | undefined {
  const bad = literals(shape).filter((s) => s.text.includes("_"));
  return bad.length === 0
    ? undefined
    : `underscores in ${bad.map((s) => JSON.stringify(s.text)).join(", ")} (use hyphens)`;
}

/** Rule 8: no file extension on a name (an id may hold a dot: it is the server's to spell). */
export function extensionProblem(shape: PathShape): string | undefined {
  const bad = literals(shape).filter((s) => EXTENSION.test(s.text) && s.text.includes("."));
  return bad.length === 0
    ? undefined
    : `a file extension in ${bad.map((s) => JSON.stringify(s.text)).join(", ")} (choose the format with Accept)`;
}

/**
 * Rules 4, 9 and 10: levels alternate between a name and an id, /<resource>/<id>/<related>/<id>...: a path
 * opens with a name, and neither two ids nor two names follow each other.
 */
export function hierarchyProblem(shape: PathShape, options: PathWordOptions): string | undefined {
  if (shape.path.includes("//")) return "an empty level (two slashes in a row)";
  const mount = (options.mounts ?? [])
    .filter((m) => m !== "" && m !== "/" && (shape.path === m || shape.path.startsWith(`${m}/`)))
    .sort((a, b) => b.length - a.length)[0];
  let segs = segmentsOf(shape);
  if (mount !== undefined) segs = segs.slice(mount.split("/").filter((s) => s !== "").length);
  // An action in the path is rule 3's to report (the nouns check), not a missing level.
  if (segs.some((s) => namesAnAction(s, options))) return undefined;
  if (segs[0]?.isId) return "the path opens with an id, not a resource name";
  for (let i = 1; i < segs.length; i++) {
    const prev = segs[i - 1] as Segment;
    const seg = segs[i] as Segment;
    if (prev.isId && seg.isId) return `two ids in a row (${templateOf(shape)})`;
    if (!prev.isId && !seg.isId) {
      return (
        `${JSON.stringify(seg.text)} follows ${JSON.stringify(prev.text)} with no id between them: a related ` +
        `resource is /<resource>/<id>/<related>`
      );
    }
  }
  return undefined;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
