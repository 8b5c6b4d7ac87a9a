// URL credentials are refused, and the refusal never repeats them: a URL is shown with its user information replaced.

const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)@/;

/** The URL with any user:password@ replaced by <CREDENTIALS>@. */
export function withoutCredentials(url: string): string {
  return url.replace(USERINFO, "$1<CREDENTIALS>@");
}

/** Whether the URL carries user information (user:password@ or user@) before its host. */
export function hasCredentials(url: string): boolean {
  return USERINFO.test(url.trim());
}
