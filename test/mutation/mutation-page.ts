// docs/mutation.md is written whole from bench/mutation-results.json (the last `npm run mutation`) and
// bench/mutation-equivalent.json (the reviewed list of surviving mutants no client could tell apart):
// scripts/mutation-page.js writes it, test/docs-generated.test.ts holds the page to the files.
import {
  type MutationCounts,
  type MutationResults,
  mutationScore,
  type UndetectedMutant,
  type Verdict,
} from "./mutation-results.js";

/**
 * A surviving mutant reviewed: which (the code unit it lies in, mutator, the code it changed and what it put there:
 * no line, so that the review outlives a move of the lines), and why no check may fail it.
 * "equivalent": no client could tell the difference (dead code, a log line, an internal limit the run cannot reach);
 * "open": a client could, but the specification leaves that behaviour open, so a check that gated on it would fail
 * legal servers; "unreached": no request of a run against one server reaches it (TLS, an IPv6 bind, a store that cannot
 * be reached, a start refused): another configuration could tell it apart, the catalogue's run cannot, so it is named
 * apart and, like the two before, not counted against the score; "killed": a sharper check kills it since the run (`why` names the check and the broken server with the
 * same defect), seen failing with the mutant applied by hand; the next whole run of the sample records it killed.
 * A review is kept when a sample does not draw its unit: another sample, or the files whole, may.
 */
export interface EquivalentMutant {
  /** The unit's key, scripts/mutation-sample.js's ("reference-server/http/routes.ts#etagOf"). */
  unit: string;
  mutator: string;
  /** The code changed, as the results give it (one line, spacing collapsed). */
  original: string;
  replacement: string;
  /**
   * Which of the unit's mutants of the same mutator, code and replacement (from 1, in source order), where they need
   * different reviews; without it, the review is of them all.
   */
  occurrence?: number;
  kind: "equivalent" | "open" | "unreached" | "killed";
  why: string;
}

const VERDICT: Record<EquivalentMutant["kind"], string> = {
  equivalent: "equivalent",
  open: "left open by the spec",
  unreached: "not reached by a run against one server",
  killed: "killed since by a sharper check",
};
const cell = (text: string) => `\`${text.replace(/`/g, "'").replace(/\|/g, "\\|")}\``;
/** A review's own words as Markdown text: a "<" would open an HTML tag, a "|" end the table cell. */
const prose = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/\|/g, "\\|");
export const sameMutant = (e: EquivalentMutant, m: UndetectedMutant) =>
  e.unit === m.unit &&
  e.mutator === m.mutator &&
  e.original === m.original &&
  e.replacement === m.replacement &&
  (e.occurrence === undefined || e.occurrence === m.occurrence);
/** Where a mutant is: file, line and column, and the code unit a review knows it by. */
const where = (m: UndetectedMutant) => {
  const at = m.unit.indexOf("#");
  return `${m.file}:${m.line}:${m.column}${at === -1 ? "" : ` (${m.unit.slice(at + 1)})`}`;
};
const countsRow = (name: string, c: MutationCounts) =>
  `| ${name} | ${c.total} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} | ${c.invalid} | ` +
  `${mutationScore(c)} % |`;

const INTRO = `# Mutation testing: what the catalogue catches

Written by \`npm run mutation\` from \`bench/mutation-results.json\` and the reviewed \`bench/mutation-equivalent.json\`;
do not edit by hand (\`test/docs-generated.test.ts\` holds it to them).

StrykerJS changes the reference server's request handling in small ways (a status code, a condition, a removed
statement, a changed string: one *mutant* each) and runs the catalogue's default check (less the contract checks that read the contract file alone) in-process
against each mutated server (\`test/mutation/catalogue.mutation.ts\`), told what the reference documents and does not
advertise, as its users would tell it: its \`?body=\` filter (\`--filter body\`). A mutant is *killed* when a gating check fails,
*timed out* when the server hung past Stryker's bound (detected too), *survived* when every gating check passed, and
*no coverage* when the catalogue never ran the changed code. The score is Stryker's: killed and timed out over all
four.

The files are the reference server's request handling (\`scripts/mutation-sample.js\` lists them and what is left out).
Their 1,638 mutants whole are ten times the default sample's 170, so a run takes a seeded sample of their code units
(each function, class method or top-level constant, a long one cut into its statements, each named by a key such as
\`reference-server/http/routes.ts#etagOf\`), drawn by a hash of the seed and the key, and mutates what lies wholly
inside them: a change of a file's lines (a comment reflowed) leaves the sample as it was, and adding or removing a
function changes only that function's draw. Stryker's incremental mode (\`bench/mutation-incremental.json\`,
committed) then tests again only the mutants whose code changed, and \`scripts/mutation.js\` forces a whole run of the
sample when the catalogue (\`suites/\`, \`harness/\`) changed since the results were recorded. A review in
\`bench/mutation-equivalent.json\` names its mutant by unit, mutator, code and replacement, not by line, and is kept
when a sample does not draw it. \`EXAMPLE_CONFORMANCE_MUTATION_SAMPLE=all\`
mutates the files whole; \`EXAMPLE_CONFORMANCE_MUTATION_SEED\` runs the catalogue at another seed.
`;

/** Verdicts seen to flip between runs, each with why (issue 44 item 4): a timeout there is load, not detection. */
const FLIPPING = `## Verdicts that flip

- \`reference-server/grpc.ts:202:34\` ObjectLiteral, \`{ ...defaultLimits(), ...options.protection }\` to \`{}\`
  (drawn in an earlier sample): timed out in one run, survived in another. With no protection limits the memory
  watermark is undefined, the sampler's comparison with it is never true (NaN), and it forces two full garbage
  collections a second (an idle server made 10 major collections in 3 s, the reference 2); every reply is the same,
  and no limit the catalogue reaches is lost, so only the run's time grows, past Stryker's bound (the baseline's time
  x 1.5 + 30 s) when the machine is loaded. Its verdict is equivalent: a timeout there is the load, not a detection.
`;

function runLine(r: MutationResults): string {
  const sample =
    r.sample.share === "all"
      ? "the files whole"
      : `${r.sample.units} code units drawn at share ${r.sample.share}, seed ${r.sample.seed}`;
  const took = r.durationS !== undefined ? `, in ${Math.round(r.durationS / 60)} min` : "";
  return (
    `Measured ${r.date.slice(0, 10)} on Node ${r.node}, StrykerJS ${r.stryker}, ${sample}, the catalogue at seed ` +
    `${r.catalogueSeed}, concurrency ${r.concurrency}${took}.`
  );
}

function survivorTable(r: MutationResults, equivalents: readonly EquivalentMutant[]): string[] {
  if (r.survived.length === 0) return ["No mutant survived."];
  const rows = r.survived.map((m) => {
    const eq = equivalents.find((e) => sameMutant(e, m));
    return (
      `| ${where(m)} | ${m.mutator} | ${cell(m.original)} | ${cell(m.replacement)} | ` +
      `${eq ? `${VERDICT[eq.kind]}: ${prose(eq.why)}` : "**not explained yet**"} |`
    );
  });
  return ["| Where | Mutator | Was | Became | Verdict |", "|---|---|---|---|---|", ...rows];
}

const VERDICT_AT: Record<Verdict, string> = {
  killed: "killed",
  timeout: "timed out",
  survived: "survived",
  noCoverage: "not covered",
};

/** The second seed's run of the sample, when there was one, and every mutant whose verdict differs (issue 44 item 4). */
function seedSection(r: MutationResults): string[] {
  const head = [
    "## Verdicts that depend on the seed",
    "",
    "A mutant detected (killed or timed out) at one catalogue seed and not (survived or not covered) at another is " +
      "caught, or missed, by luck of the seed: the check whose generated inputs reach it reaches it only sometimes, " +
      "a flaky verdict to fix. `npm run mutation -- --second-seed N` runs the same sample again at seed N and lists " +
      "them here.",
    "",
  ];
  const s = r.secondSeed;
  if (s === undefined) return [...head, "No second seed was run against these results."];
  const c = s.counts;
  const took = s.durationS !== undefined ? `, in ${Math.round(s.durationS / 60)} min` : "";
  const run =
    `The same sample at the catalogue's seed ${s.seed} (${s.date.slice(0, 10)}${took}): score ${s.score} %, ` +
    `${c.killed} killed, ${c.timeout} timed out, ${c.survived} survived, ${c.noCoverage} not covered, of ${c.total}.`;
  if (s.differing.length === 0)
    return [...head, run, "", `None: every mutant's verdict is the same at seeds ${r.catalogueSeed} and ${s.seed}.`];
  return [
    ...head,
    run,
    "",
    `| Where | Mutator | Was | Became | At seed ${r.catalogueSeed} | At seed ${s.seed} |`,
    "|---|---|---|---|---|---|",
    ...s.differing.map(
      (m) =>
        `| ${where(m)} | ${m.mutator} | ${cell(m.original)} | ${cell(m.replacement)} | ${VERDICT_AT[m.first]} | ` +
        `${VERDICT_AT[m.second]} |`,
    ),
  ];
}

/** The page, from the results and the reviewed equivalents. */
/** A run's undetected mutants against the reviews: how many each kind explains, and the share the issue sets (90 %). */
export interface ReviewTally {
  /** Survivors and mutants not covered. */
  undetected: number;
  /** Reviewed as no client could tell apart. */
  same: number;
  /** Reviewed as changing what the specification leaves open. */
  open: number;
  /** Reviewed as reached by no request of a run against one server. */
  unreached: number;
  killedSince: number;
  unexplained: number;
  /** Killed or timed out in the run. */
  detected: number;
  /** Detected, or killed since, over the mutants not reviewed as equivalent (or open), in % to a tenth. */
  share: number;
}

export function reviewTally(r: MutationResults, equivalents: readonly EquivalentMutant[]): ReviewTally {
  // Survivors and mutants not covered alike: each is detected by no check, so each is killed since or explained.
  const undetected = [...r.survived, ...r.noCoverage];
  const reviewed = undetected.map((m) => equivalents.find((e) => sameMutant(e, m))).filter((e) => e !== undefined);
  const kinds = (kind: EquivalentMutant["kind"]) => reviewed.filter((e) => e.kind === kind).length;
  const [same, open, unreached, killedSince] = [
    kinds("equivalent"),
    kinds("open"),
    kinds("unreached"),
    kinds("killed"),
  ];
  const detected = r.counts.killed + r.counts.timeout;
  const nonEquivalent = detected + r.counts.survived + r.counts.noCoverage - same - open - unreached;
  const share = nonEquivalent === 0 ? 0 : Math.round(((detected + killedSince) / nonEquivalent) * 1000) / 10;
  return {
    undetected: undetected.length,
    same,
    open,
    unreached,
    killedSince,
    unexplained: undetected.length - reviewed.length,
    detected,
    share,
  };
}

export function mutationPage(r: MutationResults, equivalents: readonly EquivalentMutant[]): string {
  const { undetected, same, open, unreached, killedSince, unexplained, detected, share } = reviewTally(r, equivalents);
  const equivalent = same + open + unreached;
  const noCoverage = r.noCoverage.map((m) => {
    const eq = equivalents.find((e) => sameMutant(e, m));
    return (
      `- ${where(m)} ${m.mutator}: ${cell(m.original)} to ${cell(m.replacement)}: ` +
      `${eq ? `${VERDICT[eq.kind]}: ${prose(eq.why)}` : "**not explained yet**"}`
    );
  });
  return [
    INTRO,
    "## The last run",
    "",
    runLine(r),
    "",
    `Score ${r.score} % at the catalogue's seed ${r.catalogueSeed}: ${detected} detected (${r.counts.killed} killed, ${r.counts.timeout} timed out), ` +
      `${r.counts.survived} survived, ${r.counts.noCoverage} not covered, of ${r.counts.total} mutants ` +
      `(${r.counts.invalid} that did not run are not counted). Of the ${undetected} survivors and mutants ` +
      "not covered, " +
      `${equivalent} are reviewed as equivalent (${same} no client could tell apart, ${open} change what the ` +
      `specification leaves open, ${unreached} no request of a run against one server reaches), ${killedSince} are killed since by a sharper check, and ${unexplained} are not ` +
      `explained yet; detected, or killed since, over the mutants not reviewed as equivalent: ${share} %.`,
    "",
    "| File | Mutants | Killed | Timed out | Survived | No coverage | Did not run | Score |",
    "|---|---|---|---|---|---|---|---|",
    ...Object.entries(r.files).map(([file, c]) => countsRow(file, c)),
    countsRow("all", r.counts),
    "",
    "## Surviving mutants",
    "",
    "Each is killed by a sharper check (with a broken server in `fixtures/broken-servers/` that carries the same " +
      "defect) or listed in `bench/mutation-equivalent.json` with why no check may fail it: no client could tell " +
      "the difference (equivalent), the specification leaves that behaviour open, or no request of a run against one " +
      "server reaches it (another configuration could: TLS, an IPv6 bind, a store that cannot be reached).",
    "",
    ...survivorTable(r, equivalents),
    "",
    "## Not covered",
    "",
    ...(noCoverage.length > 0
      ? [
          "Code the catalogue's run never reached: a changed line there is no change a client of the default " +
            "check sees. Each is reviewed as a survivor is: killed since by a sharper check, or explained.",
          "",
          ...noCoverage,
        ]
      : ["Every mutant's code was reached."]),
    "",
    ...seedSection(r),
    "",
    FLIPPING,
  ].join("\n");
}
