// Words for a POSIX shell line: replay commands and curl lines are pasted into one.

/** Single-quotes a word for POSIX shells: nothing inside is expanded. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
