// The one boundary where text a target controls (statuses, messages, bodies, headers, links, log lines) becomes
// output: each output medium takes it through here, so nothing a target sends can draw on a terminal, forge a
// line, command a CI runner or break a report file.

/** Longest target text shown in one place, in UTF-8 bytes; the JSON report keeps the whole. */
export const MAX_SHOWN_BYTES = 1024;

/**
 * Characters shown escaped: C0 controls and DEL, C1 controls, bidirectional and invisible formatting marks,
 * line and paragraph separators, the byte-order mark, noncharacters, and lone surrogates. A regular expression
 * without the u flag, so that lone surrogates are seen one code unit at a time.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = new RegExp(
  [
    "[\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff",
    "\\ufff9-\\ufffb\\ufdd0-\\ufdef\\ufffe\\uffff]",
    "|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]",
  ].join(""),
  "g",
);

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeChar(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** Cuts text to at most `max` UTF-8 bytes on a character boundary, saying how much was left out. */
export function cut(text: string, max: number = MAX_SHOWN_BYTES): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= max) return text;
  let end = Math.min(text.length, max);
  while (end > 0 && Buffer.byteLength(text.slice(0, end), "utf8") > max) end--;
  // Never split a surrogate pair.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const kept = text.slice(0, end);
  return `${kept}... (${bytes - Buffer.byteLength(kept, "utf8")} more bytes)`;
}

export interface NeutraliseOptions {
  /**
   * Keep line feeds (HTML, XML text); default false. A colon that would begin a line is shown escaped (`\x3a`):
   * a document printed to stdout, or a report file printed in a CI job, is read line by line by a GitHub runner,
   * where a line that begins with `::` is a workflow command.
   */
  multiline?: boolean;
  /** Bound in UTF-8 bytes before escaping; default MAX_SHOWN_BYTES. */
  max?: number;
}

/**
 * Target text made inert: every unsafe character shown as an escape (`\x1b`, `\r`, `\u202e`), and the whole
 * cut to a bound. On one line unless `multiline`.
 */
export function neutralise(text: string, options: NeutraliseOptions = {}): string {
  const shown = cut(String(text), options.max ?? MAX_SHOWN_BYTES);
  if (options.multiline) {
    return shown
      .split("\n")
      .map((line) => line.replace(UNSAFE, escapeChar).replace(/^:/, "\\x3a"))
      .join("\n");
  }
  return shown.replace(UNSAFE, escapeChar);
}

/** For a terminal or a log: one line, nothing that moves the cursor, changes colours or redraws a line. */
export const forTerminal = (text: string): string => neutralise(text);

/** GitHub Actions workflow-command data: neutralised, then escaped as the runner reads it. */
export const forAnnotationData = (text: string): string =>
  text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

/** GitHub Actions workflow-command property values (title=...): the data escapes plus : and ,. */
export const forAnnotationProperty = (text: string): string =>
  forAnnotationData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");

/** HTML text and attribute values: neutralised (line feeds kept), then the markup characters as entities. */
export const forHtml = (text: string): string =>
  neutralise(text, { multiline: true })
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");

/**
 * Markdown for a GitHub job summary: one line, neutralised, with the characters Markdown and HTML give a
 * meaning to escaped, so a target can neither add markup nor break a table row.
 */
export const forMarkdown = (text: string): string =>
  neutralise(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([\\`*_{}[\]()#+\-.!|~])/g, "\\$1");

/** XML 1.0 text for a JUnit file: neutralised (line feeds kept); the builder escapes the markup characters. */
export const forXml = (text: string): string => neutralise(text, { multiline: true });
