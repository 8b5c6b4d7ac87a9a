// What a recorded mutation run says beside its counts (test/mutation/mutation-results.ts's meta), for the unit tests
// of the results and the page: a run of a sample of one unit at the catalogue's seed 1.
export const MUTATION_META = {
  date: "2026-11-27T00:00:00.000Z",
  node: "20.0.0",
  stryker: "9.6.1",
  sample: { share: 0.06, seed: 44, units: 1 },
  catalogueSeed: 1,
  catalogueDigest: "0",
  concurrency: 2,
};
