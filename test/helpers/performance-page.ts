// docs/performance.md is written whole by `npm run bench` from the run it measured (bench/results.json): the method
// in words, with no figure typed by hand, and every figure (the date, the machine, Node, the tool that drove the load,
// each measure, each target and whether it was met) from the results. test/docs-generated.test.ts holds the page to
// the file.
import type { Interval, Status, Target } from "../bench/interval.js";

/** A target as bench/run.js judged it: by the interval of its rounds, or (interval null) by one run. */
export interface TargetResult {
  id: string;
  target: string;
  measured: string;
  interval: Interval | null;
  /** The threshold the interval was held to; absent for a target judged otherwise. */
  goal?: Target;
  status: Status;
}

/** What the page reads of bench/results.json (bench/run.js writes it). */
export interface BenchResults {
  date: string;
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; go?: string; platform: string };
  load: { duration: string; warmup: string; inFlight: number; connections: number; generator: string };
  rounds: number;
  /** The 1, 5 and 15 minute load averages at the start and at the end of the run (/proc/loadavg). */
  loadAverageAtStart?: number[];
  loadAverageAtEnd?: number[];
  targets?: TargetResult[];
  roundTrips?: { rttMs: number };
  /** Facts about this results file a reader needs (a row measured before a change, say); a new run writes none. */
  caveats?: string[];
  /** The figures, as bench/run.js renders them (the targets are rendered here, from `targets`). */
  table: string;
  /** What one call costs the reference against plain grpc-js: bench/reference-cost.js's last recorded run. */
  referenceCost?: ReferenceCost;
}

/**
 * A run of bench/reference-cost.js recorded with RECORD=1 (bench/run.js measures no such thing, and keeps the last
 * one when it rewrites the results).
 */
export interface ReferenceCost {
  date: string;
  /** The 1, 5 and 15 minute load averages when it began. */
  loadAverageAtStart: number[];
  rounds: number;
  /** Its summary as it printed it: each server's medians per call, then each ratio within a round. */
  lines: string[];
}

const METHOD = (r: BenchResults, rtt: string, halfRtt: string) => [
  "`npm run bench` measures the servers with a load generator that is not the bottleneck, prints its table, writes",
  "every figure, every round, to `bench/results.json`, and writes this page from that file. It measures:",
  "",
  `- **gRPC servers**, each driven by the same neutral generator, ${r.load.generator}, built from`,
  "  Debian's grpc-go in GOPATH mode like the grpc-go implementation, its latencies in a log-linear histogram: the",
  "  reference server (`serve`), a plain grpc-js server of the same contract (`bench/plain-grpc-js-server.js`:",
  "  proto-loader, no guard, no strict decoding, the reference's reply) and the grpc-go implementation",
  "  (fixtures/implementations/go), as requests/s, p50 and p99, and their ratios.",
  "- `example-conformance load`'s own ceiling against the grpc-go server, as a ratio to the Go generator's at the",
  "  same load (a thread per core but one: the server needs the other).",
  "- `load --connect`, `load --grpc-web` and `load --http` (with its mix) against the reference, each beside",
  "  `load --grpc` against the same server's gRPC port at the same concurrency and connections, one thread each.",
  "  `load --grpc` drives through its own HTTP/2 client (see [Load runs and their " +
    "verdict](load.md#load-runs-and-their-verdict));",
  "  `load --connect` and `load --grpc-web` over HTTP/1.1 through a client of its own, a keep-alive connection per call",
  "  in flight (`harness/load/_internals/raw-h1-caller.ts`).",
  "- `serve --workers 2` against `--workers 1` (both on PostgreSQL, which more than one worker needs; gRPC never",
  "  touches the store).",
  `- the default \`check\` run's wall time, locally and through a proxy adding ${halfRtt} ms each way`,
  `  (test/helpers/latency-proxy.ts), and the round trips it costs there (${rtt} ms each, counted by wall time, by the`,
  "  request bursts the proxy sees and by the report's own count of each check's traffic).",
  "- the reference's HTTP create (POST) and read (GET of one message) throughput on each store, under wrk.",
  "",
  "Many short rounds, not a few long ones: a round starts every server afresh (one instance of a Node server can run",
  "steadily faster or slower than the next), runs every gRPC measurement once, in an order rotated from round to",
  "round, so that whatever else the machine does weighs on all alike, and stops the servers. Ratios are taken within",
  "each round. Each figure is the mean over the rounds with its ninety-five percent confidence interval (Student's t",
  "over the rounds, `test/bench/interval.ts`); each ratio is the geometric mean of the rounds' ratios, its interval",
  "taken on the log scale, so that a ratio and its inverse agree and no bound falls to zero. Each target is read",
  "from its interval, never from one median: a target of at least a bound is **met** when the interval's lower end",
  "is at or above it, **not met** when its upper end is below it, and **not resolved** when the interval straddles",
  "it (at most and below, likewise). Noise widens",
  "the interval: on a busy machine, or with few rounds, a target comes out not resolved rather than met or missed by",
  "chance. A target measured by one run says so, and its status is that run's. `BENCH_DURATION` (seconds),",
  "`BENCH_ROUNDS` and `BENCH_CHECK_RUNS` set the length, the count of rounds and of local `check` runs;",
  "`BENCH_ONLY=grpc` runs the gRPC part alone and leaves `bench/results.json` and this page as they are.",
];

const TARGETS = [
  "## Reading the targets",
  "",
  "The last table says, target by target, what this run measured, with its interval, and whether the target was",
  "met, not met or not resolved. What the figures do not say by themselves:",
  "",
  "- **Round trips through the proxy.** The JSON report counts each check's `traffic` (exchanges, bytes handed to",
  "  calls, and round trips: the times its calls in flight went from none to one), and the bench sums them; calls a",
  "  check makes under a long exchange of its own share its round trip, so the sum is not the wall time's count. The",
  "  costliest checks are listed with both. The history phase (`grpc.stateless.history-independent`'s property",
  "  cases, each on a fresh connection, and its leak probe, which has the target to itself) is most of what is left,",
  "  the HTTP checks beside it: one after another since they create, change and read resources of one collection (on",
  "  kept-alive connections, a fresh one only where a check asks about connections or sessions), but for those that",
  "  judge only what they create, by its URIs, which run side by side with their neighbours that do too; the",
  "  history checks' passes beside them stand, and anything else has the history checks judged again after them (a",
  "  legal reply may change with stored data).",
  "- **The default `check` locally.** `grpc.stateless.deterministic` must see a clock in whole seconds tick, so its",
  "  samples straddle a second, and the history checks end before the other gRPC checks begin (the HTTP checks run",
  "  beside them): the run is at least the process start, that probe, then the other gRPC checks. A target",
  "  under that span cannot be met while the clock probe stands.",
  "- **Reference against plain grpc-js.** Separate runs of a few long rounds on a machine whose cores the generator",
  "  shares disagreed by more than the target's margin; the interval over many fresh rounds says whether this run",
  "  resolves it; the last section says what one call costs each, and where the reference's time goes.",
  "- **`serve --workers 2`.** Near twice one worker is only to be seen with the generator on cores of its own; on a",
  "  smaller machine the run says it is not resolved.",
  "- **`load --connect` and `load --grpc-web` against `load --grpc`.** The load process shares the machine's cores with",
  "  the server, so its own CPU per call weighs in these ratios; over HTTP/1.1 it sends through a client made for",
  "  the call (`harness/load/_internals/raw-h1-caller.ts`). `node bench/transports.js` measures these ratios alone:",
  "  `BENCH_MARGINAL=1` separates the load process's CPU per call from its start-up (near a second of CPU, which a",
  "  short round spreads over its calls), and `BENCH_EXCHANGES` measures the HTTP/1.1 clients alone, node:http's",
  "  Agent, undici's Pool and `load`'s own.",
  "- **`load`'s memory over a long run** is not measured by the bench: the run says so.",
];

/** A mean with its interval: "0.912 (95 % interval 0.871 to 0.953, 10 rounds)"; with one round, no interval. */
export function showInterval(i: Interval, unit = "", samples = "rounds"): string {
  if (i.mean === null) return "not measured";
  if (i.low === null || i.high === null) return `${i.mean}${unit} (one of the ${samples} alone: no interval)`;
  return `${i.mean}${unit} (95 % interval ${i.low} to ${i.high}${unit}, ${i.n} ${samples})`;
}

/** The targets table: each target, what was measured with its interval, and met, not met or not resolved. */
export function targetsTable(results: BenchResults): string[] {
  const targets = results.targets ?? [];
  if (targets.length === 0) return [];
  return [
    "| target | measured | status |",
    "|---|---|---|",
    ...targets.map((t) => `| ${t.target} | ${t.measured} | **${t.status}** |`),
  ];
}

/** The load average line: what else the machine was doing, and a warning when it was busy. */
function loadLine(results: BenchResults): string[] {
  const [start, end] = [results.loadAverageAtStart, results.loadAverageAtEnd];
  if (!start || !end) return [];
  // The end's figure counts the bench's own processes (a server and its generator fill the cores): only the start's
  // says what else the machine was doing.
  const busy = start[0]! > results.machine.cores / 2;
  return [
    "",
    `Load average (1, 5 and 15 minutes, /proc/loadavg) ${start.join(", ")} at the start and ${end.join(", ")} at ` +
      `the end (the bench's own work counted in it), on ${results.machine.cores} ` +
      `cores${busy ? ": the machine was busy with other work when the run began, so these are not quiet figures. The intervals are as wide as the rounds' scatter makes them, but they cannot see a bias the other work puts on one server more than on another, so no status of this run settles a target." : "."}`,
  ];
}

const REFERENCE_COST = [
  "## One call's cost: the reference against plain grpc-js",
  "",
  "Requests/s on a shared machine move with whatever else runs; what one call costs the server moves less.",
  "`node bench/reference-cost.js` drives the reference and the plain grpc-js server with the same generator, in fresh",
  "processes and interleaved rounds, and counts per call each server's CPU time (the sum over its threads of",
  "`/proc/<pid>/task/*/schedstat`), the bytes it allocates and its collector's time (`v8.GCProfiler`).",
  "",
  "Where the time goes, by `node --cpu-prof` of each server under the generator (the samples of the measured",
  "window, self time per call): in both servers nearly all of a call is `node:http2` (its header blocks, " +
    "`respond`, its",
  "streams' construction and writes), grpc-js (its intercepting call, metadata and decoder) and the collector; the",
  "reference adds its guard (the stream's admission and routing, the first bytes judged, the write counted), a small",
  "share, and saves the plain server's proto-loader serialization and channelz. Off the per-call path: grpc-js's idle",
  "limit (a Map lookup, a `once('close')` listener and, at a session's last stream, a clock read, a timer refresh and",
  "a trace string built through the session's socket proxy, on every stream) is kept by the guard's sweep, which",
  "counts each session's calls anyway. What remains of the guard per",
  "call is the state it needs to judge the stream: one object, two listeners (its errors and its end) and its write",
  "and push in place of node's. Writes are batched alike: `strace -c -f` counts the same `writev` calls per call for",
  "both servers, `nghttp2` gathering many calls' frames into one.",
];

/** The last recorded run of bench/reference-cost.js, its summary as printed. */
function referenceCostSection(cost: ReferenceCost | undefined): string[] {
  if (cost === undefined) return [...REFERENCE_COST, "", "No run of it is recorded."];
  const [start] = cost.loadAverageAtStart;
  return [
    ...REFERENCE_COST,
    "",
    `Measured ${cost.date.slice(0, 10)} at ${cost.date.slice(11, 16)} UTC, \`RECORD=1 node ` +
      `bench/reference-cost.js\`, ${cost.rounds} rounds, load average ${start} at the ` +
      `start${start !== undefined && start > 2 ? ": the machine was busy, so the figures are not quiet ones" : ""}:`,
    "",
    ...cost.lines.map((l) => `- ${l}`),
  ];
}

/** The whole of docs/performance.md for the results of one `npm run bench`. */
export function performancePage(results: BenchResults): string {
  const rttMs = results.roundTrips?.rttMs;
  const rtt = rttMs === undefined ? "(not measured)" : String(rttMs);
  const halfRtt = rttMs === undefined ? "(not measured)" : String(rttMs / 2);
  const m = results.machine;
  const run = [
    "## The run",
    "",
    `Measured ${results.date.slice(0, 10)} at ${results.date.slice(11, 16)} UTC on ${m.cpu}, ${m.cores} cores, ` +
      `${m.memoryGiB} GiB, ${m.platform};`,
    `Node ${m.node}${m.go === undefined ? "" : `, ${m.go}`}; the load driven by ${results.load.generator}; ` +
      `${results.rounds} round${results.rounds === 1 ? "" : "s"} of ${results.load.duration} each.`,
    ...loadLine(results),
    ...(results.caveats ?? []).flatMap((c) => ["", c]),
    "",
    results.table,
    ...(results.targets?.length ? ["", ...targetsTable(results)] : []),
  ];
  return [
    "# Performance",
    "",
    "<!-- Written by `npm run bench` from bench/results.json (test/helpers/performance-page.ts); do not edit. -->",
    "",
    ...METHOD(results, rtt, halfRtt),
    "",
    ...run,
    "",
    ...TARGETS,
    "",
    ...referenceCostSection(results.referenceCost),
    "",
  ].join("\n");
}
