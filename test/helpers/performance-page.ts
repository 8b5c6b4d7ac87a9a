// docs/performance.md is written whole by `npm run bench` from the run it measured (bench/results.json): the method
// in words, with no figure typed by hand, and every figure (the date, the machine, Node, the tool that drove the load,
// each measure, each target and whether it was met) from the results. test/docs.test.ts holds the page to the file.

/** What the page reads of bench/results.json (bench/run.js writes it). */
export interface BenchResults {
  date: string;
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; go?: string; platform: string };
  load: { duration: string; warmup: string; inFlight: number; connections: number; generator: string };
  rounds: number;
  roundTrips?: { rttMs: number };
  /** Facts about this results file a reader needs (a row measured before a change, say); a new run writes none. */
  caveats?: string[];
  /** The figures and the targets, as bench/run.js renders them. */
  table: string;
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
  "  `load --grpc` drives through its own HTTP/2 client (see [Load runs and their verdict](load.md#load-runs-and-their-verdict));",
  "  `load --connect` and `load --grpc-web` through node:http's keep-alive agent.",
  "- `serve --workers 2` against `--workers 1` (both on PostgreSQL, which more than one worker needs; gRPC never",
  "  touches the store).",
  `- the default \`check\` run's wall time, locally and through a proxy adding ${halfRtt} ms each way`,
  `  (test/helpers/latency-proxy.ts), and the round trips it costs there (${rtt} ms each, counted by wall time, by the`,
  "  request bursts the proxy sees and by the report's own count of each check's traffic).",
  "- the reference's HTTP create (POST) and read (GET of one message) throughput on each store, under wrk.",
  "",
  "A round runs every gRPC measurement once, in an order rotated from round to round, so that whatever else the",
  "machine does weighs on all alike; ratios are taken within each round and reported as the median with the rounds'",
  "spread. `BENCH_DURATION` (seconds) and `BENCH_ROUNDS` set the length and the count; `BENCH_ONLY=grpc` runs the gRPC",
  "part alone and leaves `bench/results.json` and this page as they are. On a machine whose cores the generator",
  "shares with the server, runs of the bench disagree by more than some differences they measure: a single run is",
  "rough, and the rounds are printed beside each figure.",
];

const TARGETS = [
  "## Reading the targets",
  "",
  "The last table says, target by target, what this run measured and whether the target was met. What the",
  "figures do not say by themselves:",
  "",
  "- **Round trips through the proxy.** The JSON report counts each check's `traffic` (exchanges, bytes handed to",
  "  calls, and round trips: the times its calls in flight went from none to one), and the bench sums them; calls a",
  "  check makes under a long exchange of its own share its round trip, so the sum is not the wall time's count. The",
  "  costliest checks are listed with both. The history phase (`grpc.stateless.history-independent`'s property",
  "  cases, each on a fresh connection, and its leak probe, which has the target to itself) and the HTTP checks, one",
  "  after another since they create, change and read resources of one collection, each request on a fresh",
  "  connection so that no state rides on the client side, are most of what is left.",
  "- **The default `check` locally.** `grpc.stateless.deterministic` must see a clock in whole seconds tick, so its",
  "  samples straddle a second, and the history checks end before the checks that store data begin (a legal reply may",
  "  change with stored data): the run is at least the process start, that probe, then the other checks. A target",
  "  under that span cannot be met while the clock probe stands.",
  "- **Reference against plain grpc-js.** Each run is steady within itself (its rounds' spread is printed), but",
  "  separate runs on a machine whose cores the generator shares have disagreed by more than the target's margin: one",
  "  run does not resolve it.",
  "- **`serve --workers 2`.** Near twice one worker is only to be seen with the generator on cores of its own; on a",
  "  smaller machine the run says it is not resolved.",
  "- **`load`'s memory over a long run** is not measured by the bench: the run says so.",
];

/** The whole of docs/performance.md for the results of one `npm run bench`. */
export function performancePage(results: BenchResults): string {
  const rttMs = results.roundTrips?.rttMs;
  const rtt = rttMs === undefined ? "(not measured)" : String(rttMs);
  const halfRtt = rttMs === undefined ? "(not measured)" : String(rttMs / 2);
  const m = results.machine;
  const run = [
    "## The run",
    "",
    `Measured ${results.date.slice(0, 10)} at ${results.date.slice(11, 16)} UTC on ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform};`,
    `Node ${m.node}${m.go === undefined ? "" : `, ${m.go}`}; the load driven by ${results.load.generator}; ${results.rounds} round${results.rounds === 1 ? "" : "s"} of ${results.load.duration} each.`,
    ...(results.caveats ?? []).flatMap((c) => ["", c]),
    "",
    results.table,
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
  ].join("\n");
}
