// What an implementation may declare about itself (the config's `claims`): a declaration the certificate shows as
// declared, never as judged, which makes a check that needs the input it rules out "not applicable by claim".

export interface Claims {
  /** "single": the implementation runs as one instance, so there is no other replica to check against. */
  replicas?: "single";
}

/** The claims and their values, for the config's schema and for words. */
export const CLAIM_VALUES = { replicas: ["single"] } as const satisfies Record<keyof Claims, readonly string[]>;

/** The flags each claim answers: a check skipped for want of one of them is not applicable by that claim. */
const ANSWERS: Record<keyof Claims, readonly string[]> = { replicas: ["--replica", "--http-replica"] };

/** The claim, as "key: value", that makes a check needing this flag not applicable; undefined when none does. */
export function claimAnswering(claims: Claims | undefined, needs: string): string | undefined {
  for (const [key, value] of Object.entries(claims ?? {}) as [keyof Claims, string | undefined][]) {
    if (value !== undefined && ANSWERS[key].includes(needs)) return `${key}: ${value}`;
  }
  return undefined;
}

/** The claims as "key: value" lines, in a stable order. */
export function claimList(claims: Claims | undefined): string[] {
  return (Object.entries(claims ?? {}) as [string, string | undefined][])
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v}`)
    .sort();
}
