// Whether a request carries the run's API key where a server controlling access by it may look: any header or
// metadata entry (a -bin entry decoded), or any query parameter, bare or as "Bearer K". Part 5 leaves the placement
// open, so every one of them is accepted.

const BEARER = /^bearer\s+/i;

export const isKey = (value: string, key: string): boolean =>
  value.trim() === key || (BEARER.test(value) && value.replace(BEARER, "").trim() === key);

export function carriesKey(headers: Readonly<Record<string, readonly string[]>>, path: string, key: string): boolean {
  for (const [name, values] of Object.entries(headers)) {
    for (const v of values) {
      if (isKey(v, key)) return true;
      if (name.endsWith("-bin") && isKey(Buffer.from(v, "base64").toString("utf8"), key)) return true;
    }
  }
  const query = path.indexOf("?");
  if (query < 0) return false;
  for (const v of new URLSearchParams(path.slice(query + 1)).values()) if (isKey(v, key)) return true;
  return false;
}
