// The seed of the mutation run's catalogue: EXAMPLE_CONFORMANCE_MUTATION_SEED sets another (step 4 of issue 44: a
// mutant killed at one seed and surviving at another is a flaky verdict).
export const MUTATION_SEED = Number(process.env.EXAMPLE_CONFORMANCE_MUTATION_SEED ?? 1);
