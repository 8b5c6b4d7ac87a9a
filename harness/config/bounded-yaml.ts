// The configuration file's YAML, read with its work bounded: nesting, keys and items, and aliases are counted as the
// text is parsed, and a file past a limit is refused at the line where it passes it, before it costs more than the
// text it holds. Every refusal is a config error (exit 2) of one line, `FILE:LINE: what is wrong`, with the limit
// when one was passed.
import {
  Composer,
  CST,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  Parser,
  type Document,
  type Node,
  type YAMLMap,
} from "yaml";
import { ConformanceError } from "../errors.js";

/**
 * The limits of a configuration file, each far above what any configuration the schema accepts needs (its deepest
 * value is 3 levels down, and all its lists at their longest hold about 5,200 keys and items).
 */
export const CONFIG_LIMITS: ConfigLimits = {
  /** Collections (maps and lists) nested in one another. */
  depth: 64,
  /** Keys of maps and items of lists, in the whole file, each alias counted as everything it repeats. */
  entries: 10_000,
  /** Aliases (`*name`) in the whole file. */
  aliases: 100,
};

export interface ConfigLimits {
  depth: number;
  entries: number;
  aliases: number;
}

export interface ParsedConfigYaml {
  doc: Document;
  /** The file's value as JavaScript (an alias is the same object as its anchor's). */
  value: unknown;
  /** The line of an offset in the text (1 when there is none). */
  at: (offset: number | undefined) => number;
}

const tooManyEntries = (limit: number, how = "") =>
  `more keys and items than a configuration needs${how} (at most ${limit} in all)`;

type CstCollection = CST.BlockMap | CST.BlockSequence | CST.FlowCollection;
const isCstCollection = (t: CST.Token): t is CstCollection =>
  t.type === "block-map" || t.type === "block-seq" || t.type === "flow-collection";

/** Whether `start` holds, from `from` on, the indicator of an item (`-`, `?`, `:`). */
function hasIndicator(start: CST.SourceToken[], from: number): boolean {
  for (let i = from; i < start.length; i++) {
    const type = start[i]!.type;
    if (type === "seq-item-ind" || type === "explicit-key-ind" || type === "map-value-ind") return true;
  }
  return false;
}

/** A composer error, thrown to stop composing at the first (a file of stray tokens would otherwise make one each). */
class FirstYamlError {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}
type ErrorSource = number | [number, number] | readonly number[] | { offset: number };
const errorOffset = (source: ErrorSource): number =>
  typeof source === "number"
    ? source
    : Array.isArray(source)
      ? (source as number[])[0]!
      : (source as { offset: number }).offset;

/**
 * Parses `text` (the contents of `file`, at most 1 MiB) as one YAML document within {@link CONFIG_LIMITS}, in time
 * and memory linear in its size. Not valid YAML, more than one document, a duplicate key, an alias with no anchor
 * before it or inside the node it names, or a limit passed: a config error naming the file and the line.
 */
export function parseConfigYaml(text: string, file: string, limits: ConfigLimits = CONFIG_LIMITS): ParsedConfigYaml {
  const lines = new LineCounter();
  const at = (offset: number | undefined) => (offset === undefined ? 1 : lines.linePos(offset).line);
  const refuse = (offset: number | undefined, why: string): never => {
    throw new ConformanceError("config", `${file}:${at(offset)}: ${why}`);
  };

  // uniqueKeys: false, since yaml's own check compares each key with every key before it (quadratic): the walk below
  // finds duplicates with a set per map.
  // logLevel error: a map with a collection for a key would otherwise print a Node warning on stderr.
  const composer = new Composer({ uniqueKeys: false, logLevel: "error" });
  // The composer collects every error before it returns the document; stopping at the first keeps a file of 500,000
  // stray brackets from making 500,000 errors. Warnings are not used, so none are kept. (A private member of yaml
  // 2.9: should it be gone, the errors are still collected and the first one reported, only without the early stop.)
  // The first is kept: yaml reports what is thrown through a try/catch of its own as an error of the node around.
  let first: FirstYamlError | undefined;
  const hooked = composer as unknown as { onError?: unknown };
  if (typeof hooked.onError === "function") {
    hooked.onError = (source: ErrorSource, _code: string, message: string, warning?: boolean) => {
      if (warning) return;
      first ??= new FirstYamlError(errorOffset(source), message);
      throw first;
    };
  }

  let doc: Document | undefined;
  try {
    for (const composed of composer.compose(boundedTokens(text, lines, limits, refuse), true, text.length)) {
      doc ??= composed;
    }
  } catch (err) {
    if (first && err === first) refuse(first.offset, `not valid YAML: ${first.message.split("\n")[0]}`);
    throw err;
  }
  if (!doc) return refuse(0, "not valid YAML: no document");
  const yamlError = doc.errors[0];
  if (yamlError) refuse(yamlError.pos[0], `not valid YAML: ${yamlError.message.split("\n")[0]}`);

  checkNodes(doc, limits, refuse);
  // The walk has bounded what the aliases repeat, and yaml's own alias count refuses a file without its line.
  return { doc, value: doc.toJS({ maxAliasCount: -1 }), at };
}

/**
 * The CST tokens of `text`, its lexemes parsed one at a time: after each, the collections open on the parser's stack
 * are its nesting, and the items each has gained since last seen are counted, so that a limit is refused before
 * the text past it is parsed.
 */
function* boundedTokens(
  text: string,
  lines: LineCounter,
  limits: ConfigLimits,
  refuse: (offset: number | undefined, why: string) => never,
): Generator<CST.Token> {
  const parser = new Parser(lines.addNewLine);
  lines.addNewLine(0);
  const seen = new Map<CstCollection, { item: number; start: number }>();
  let entries = 0;
  let aliases = 0;
  let documents = 0;
  // The tokens between documents, where the composer records an error without reporting it (so a file of stray
  // brackets would make one error each): the first is refused here, in the order the composer would have met it.
  const counted = function* (tokens: Generator<CST.Token>): Generator<CST.Token> {
    for (const token of tokens) {
      switch (token.type) {
        case "document":
          if (++documents > 1) refuse(token.offset, "not valid YAML: more than one document (a configuration is one)");
          break;
        case "error":
          refuse(
            token.offset,
            `not valid YAML: ${token.message}${token.source ? `: ${JSON.stringify(token.source)}` : ""}`,
          );
          break;
        case "doc-end":
          if (documents === 0) refuse(token.offset, "not valid YAML: Unexpected doc-end without preceding document");
          break;
        case "directive":
        case "byte-order-mark":
        case "space":
        case "comment":
        case "newline":
          break;
        default:
          refuse(token.offset, `not valid YAML: Unsupported token ${token.type}`);
      }
      yield token;
    }
  };
  let scalarNext = false;
  for (const lexeme of new Lexer().lex(text)) {
    const offset = parser.offset;
    // After the scalar marker comes a scalar's text, which may begin with * (a block scalar's).
    if (!scalarNext && CST.tokenType(lexeme) === "alias" && ++aliases > limits.aliases) {
      refuse(offset, `more aliases than a configuration needs (at most ${limits.aliases})`);
    }
    scalarNext = lexeme === CST.SCALAR;
    yield* counted(parser.next(lexeme));
    let depth = 0;
    for (const token of parser.stack) {
      if (token.type === "document" && documents > 0)
        refuse(token.offset, "not valid YAML: more than one document (a configuration is one)");
      if (!isCstCollection(token)) continue;
      if (++depth > limits.depth)
        refuse(offset, `nested deeper than a configuration needs (at most ${limits.depth} levels)`);
      // An item with no key, value or indicator (what a trailing comma or comment opens) is no entry, unless it
      // gets one: the last item is looked at again after the next lexeme, its start from where it was left.
      const at = seen.get(token) ?? { item: 0, start: 0 };
      for (; at.item < token.items.length; at.item++, at.start = 0) {
        const item = token.items[at.item]!;
        const entry =
          item.key !== undefined ||
          item.sep !== undefined ||
          item.value !== undefined ||
          hasIndicator(item.start, at.start);
        if (!entry && at.item === token.items.length - 1) {
          at.start = item.start.length;
          break;
        }
        if (entry && ++entries > limits.entries) refuse(offset, tooManyEntries(limits.entries));
      }
      seen.set(token, at);
    }
  }
  yield* counted(parser.end());
}

/**
 * One walk of the composed document, iterative: a duplicate key (a set per map: linear), an alias with no anchor
 * before it or inside the node it names, and the keys and items the document holds with each alias counted as all
 * it repeats, refused at the node where the count passes the limit.
 */
/** A map or sequence being walked: its children, the next to enter, and the entries counted under it so far. */
interface Frame {
  node: Node;
  children: (Node | null | undefined)[];
  next: number;
  entries: number;
}

/** Refuses a map whose scalar keys repeat (NaN keys never equal each other, so they are left alone). */
function refuseDuplicateKeys(node: YAMLMap, refuse: (offset: number | undefined, why: string) => never): void {
  const keys = new Set<unknown>();
  for (const pair of node.items) {
    const key = pair.key;
    if (!isScalar(key) || (typeof key.value === "number" && Number.isNaN(key.value))) continue;
    if (keys.has(key.value)) refuse(key.range?.[0], "not valid YAML: Map keys must be unique");
    keys.add(key.value);
  }
}

function checkNodes(
  doc: Document,
  limits: ConfigLimits,
  refuse: (offset: number | undefined, why: string) => never,
): void {
  /** The keys and items under each anchored node, once its walk is done. */
  const done = new Map<Node, number>();
  const anchors = new Map<string, Node>();
  let total = 0;
  let repeated = 0;
  const add = (n: number, offset: number | undefined, alias = false) => {
    total += n;
    if (alias) repeated += n;
    // Without aliases the count as written has been bounded while parsing, but for the map a flow pair
    // (`[a: 1]`) makes: the refusal says which passed the limit.
    if (total > limits.entries)
      refuse(offset, tooManyEntries(limits.entries, repeated > 0 ? ", each alias counted as all it repeats" : ""));
  };
  const stack: Frame[] = [];
  const enter = (node: Node | null | undefined): number | undefined => {
    if (!node) return 0;
    if (node.anchor) anchors.set(node.anchor, node);
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (!target)
        return refuse(node.range?.[0], `not valid YAML: alias *${node.source} has no anchor &${node.source} before it`);
      const repeats = done.get(target) ?? (isScalar(target) ? 0 : undefined);
      if (repeats === undefined)
        return refuse(node.range?.[0], `not valid YAML: alias *${node.source} is inside the node it names`);
      add(repeats, node.range?.[0], true);
      return repeats;
    }
    if (isMap(node)) {
      refuseDuplicateKeys(node, refuse);
      add(node.items.length, node.range?.[0]);
      stack.push({
        node,
        children: node.items.flatMap((p) => [p.key as Node | null, p.value as Node | null]),
        next: 0,
        entries: node.items.length,
      });
      return undefined;
    }
    if (isSeq(node)) {
      add(node.items.length, node.range?.[0]);
      stack.push({ node, children: node.items as (Node | null)[], next: 0, entries: node.items.length });
      return undefined;
    }
    return 0;
  };
  // A collection's count reaches its parent when its walk is done; anything else counts at once.
  const finish = (entries: number) => {
    const parent = stack.at(-1);
    if (parent) parent.entries += entries;
  };
  const first = enter(doc.contents as Node | null);
  if (first !== undefined) return;
  while (stack.length > 0) {
    const frame = stack.at(-1)!;
    if (frame.next < frame.children.length) {
      const counted = enter(frame.children[frame.next++]);
      if (counted !== undefined) finish(counted);
      continue;
    }
    stack.pop();
    if (frame.node.anchor) done.set(frame.node, frame.entries);
    finish(frame.entries);
  }
}
