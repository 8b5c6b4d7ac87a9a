// Which lines `npm run mutation` mutates: a seeded sample of windows of the reference server's request-handling
// files, so that one run is bounded (aimed at 30 minutes on 2 cores; docs/development.md says what it took). Stryker
// takes each window as a mutate range "file:first-last" and mutates what lies wholly inside it, a removed block of a
// few lines included. EXAMPLE_CONFORMANCE_MUTATION_SAMPLE=all mutates the files whole (1,600 mutants: about six hours
// on 2 cores, from the sample's 177 in 34 minutes); a number in (0, 1] is the share of windows taken;
// EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED picks another sample.
import { readFileSync } from "node:fs";

/**
 * The request handling a client can see: routes, representation, negotiation, links, pages, auth, the memory store's
 * semantics, the gRPC handler and Connect / gRPC-Web. Not logging, the CLI, the SQL stores' plumbing, the data
 * directory, nor the protection layers (grpc-guard, protection, owed, connection-gate: the reference server's own
 * tests hold them, and the catalogue sends nothing that reaches their limits).
 */
export const MUTATION_FILES = Object.freeze([
  "reference-server/grpc.ts",
  "reference-server/hello.ts",
  "reference-server/http/auth.ts",
  "reference-server/http/connect-rpc.ts",
  "reference-server/http/errors.ts",
  "reference-server/http/links.ts",
  "reference-server/http/negotiation.ts",
  "reference-server/http/page.ts",
  "reference-server/http/representation.ts",
  "reference-server/http/routes.ts",
  "reference-server/http/store.ts",
]);

export const WINDOW_LINES = 12;
export const DEFAULT_SHARE = 0.11;
export const DEFAULT_SAMPLE_SEED = 44;

/** mulberry32: a small seeded generator, the same sample for the same seed on every machine. */
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The mutate ranges of a sample: each file cut into windows, a share of them drawn (at least one a file). */
export function mutationSample({ share = DEFAULT_SHARE, seed = DEFAULT_SAMPLE_SEED, root = "." } = {}) {
  const random = generator(seed);
  const ranges = [];
  for (const file of MUTATION_FILES) {
    const lines = readFileSync(`${root}/${file}`, "utf8").split("\n").length;
    const windows = [];
    for (let first = 1; first <= lines; first += WINDOW_LINES)
      windows.push(`${file}:${first}-${Math.min(first + WINDOW_LINES - 1, lines)}`);
    const drawn = windows.filter(() => random() < share);
    ranges.push(...(drawn.length > 0 ? drawn : [windows[Math.floor(random() * windows.length)]]));
  }
  return ranges;
}

/** The mutate list the environment asks for: the files whole, or a sample. */
export function mutateFromEnv(env = process.env) {
  const asked = env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE;
  if (asked === "all") return [...MUTATION_FILES];
  const share = asked === undefined ? DEFAULT_SHARE : Number(asked);
  if (!(share > 0 && share <= 1))
    throw new Error(
      `EXAMPLE_CONFORMANCE_MUTATION_SAMPLE must be "all" or a share in (0, 1], not ${JSON.stringify(asked)}`,
    );
  const seed =
    env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED === undefined
      ? DEFAULT_SAMPLE_SEED
      : Number(env.EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED);
  if (!Number.isInteger(seed)) throw new Error("EXAMPLE_CONFORMANCE_MUTATION_SAMPLE_SEED must be an integer");
  return mutationSample({ share, seed });
}
