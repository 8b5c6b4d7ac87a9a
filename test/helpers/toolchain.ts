// A proof that needs a toolchain (Go, Python) skips without it and says what to install; in CI it fails instead.

/** Returns when `subject`'s toolchain is there; else skips the test, or throws with CI=true (.ci/run installs them). */
export async function skipIfMissing(
  subject: { name: string; missing?(): Promise<string | undefined> },
  skip: (why: string) => void,
): Promise<void> {
  const missing = await subject.missing?.();
  if (missing === undefined) return;
  if (process.env.CI === "true") throw new Error(`${subject.name}: ${missing}`);
  skip(`${subject.name}: ${missing}; install it to run this proof`);
}
