// `load`: a bounded load run on Hello with a progress line, then throughput, latency percentiles, errors by
// status and statelessness under concurrency; thin over runLoad.
import type { Command } from "commander";
import pc from "picocolors";
import { ConformanceError } from "../errors.js";
import type { LoadReport } from "../load/run-load.js";
import { isLocal, parseAddress } from "../targets/address.js";
import { forTerminal as t } from "../reporters/_internals/neutralise.js";
import { openReportFile } from "../reporters/_internals/report-file.js";
import type { CliIo } from "./io.js";
import { durationSpec, integerSpec, shared, toOptions, type OptionTable } from "./option-table.js";

interface LoadCliOptions {
  grpc: string;
  duration: number;
  concurrency: number;
  connections: number;
  rate?: number;
  timeout: number;
  threads: number;
  json?: string;
  allowRemote?: boolean;
  quiet?: boolean;
}

/** Every option of `load`, in the order --help shows them. */
const LOAD_TABLE: OptionTable<LoadCliOptions> = {
  grpc: shared.grpc("gRPC target: host:port, dns:///host:port or unix:///path", true),
  duration: durationSpec("--duration <duration>", "how long calls keep starting: 500ms, 10s, 1m (at most 10m)", 10_000, "10s"),
  concurrency: integerSpec("--concurrency <n>", "calls in flight at once", 1, 10_000, 64),
  connections: integerSpec("--connections <n>", "connections the calls are spread over", 1, 1_000, 4),
  rate: shared.rate("calls started per second at most (default: as fast as the target answers)", 10_000_000),
  timeout: shared.timeout("one call"),
  threads: integerSpec("--threads <n>", "threads driving the calls, for a generator that needs more than one core", 1, 64, 1),
  json: { flags: "--json <file>", description: "write the results as JSON" },
  allowRemote: { flags: "--allow-remote", description: "allow a target that is not this machine (a load test is not for production by mistake)" },
  quiet: { flags: "--quiet", description: "no progress line on stderr, only the summary" },
};

export function formatLoadReport(r: LoadReport, color: boolean): string {
  const c = pc.createColors(color);
  const errors = Object.entries(r.errors);
  const lines = [
    `${r.requests} calls in ${(r.durationMs / 1000).toFixed(1)} s to ${t(r.target)} (${r.concurrency} in flight over ${r.connections} connections${r.threads > 1 ? `, ${r.threads} threads` : ""})${r.interrupted ? ", stopped early" : ""}`,
    `requests/s   ${r.requestsPerSecond}`,
    `latency ms   p50 ${r.latencyMs.p50}  p90 ${r.latencyMs.p90}  p99 ${r.latencyMs.p99}  max ${r.latencyMs.max}`,
    `errors       ${errors.length === 0 ? "none" : errors.map(([k, n]) => `${t(k)} ${n}`).join(", ")}`,
    r.stateless.compared === 0
      ? c.red("stateless    not judged: no call succeeded both at rest and under load")
      : r.stateless.mismatches === 0
      ? c.green(`stateless    every one of ${r.stateless.compared} replies equals the reply at rest (${r.stateless.distinctRequests} distinct requests)`)
      : c.red(`stateless    ${r.stateless.mismatches} of ${r.stateless.compared} replies differ from the reply at rest; first: ${t(r.stateless.example ?? "")}`),
  ];
  return `${lines.join("\n")}\n`;
}

export function addLoadCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const command = program
    .command("load")
    .description("load a gRPC server with Hello calls: throughput, latency percentiles, errors, and replies under load equal to replies at rest");
  for (const o of toOptions(LOAD_TABLE)) command.addOption(o);
  command
    .action(async (opts: LoadCliOptions) => {
      const address = parseAddress(opts.grpc);
      if (!isLocal(address) && !opts.allowRemote) {
        throw new ConformanceError("usage", `--grpc ${opts.grpc}: not this machine; a load run elsewhere needs --allow-remote`);
      }
      // Opened before the first call: a path that cannot be written is a usage error now, not after the run.
      const json = opts.json !== undefined ? await openReportFile("--json", opts.json) : undefined;
      // Loaded here, not at start: every other command would pay for hdr-histogram-js's import.
      const { runLoad } = await import("../load/run-load.js");
      const live = io.stderrIsTty === true;
      let drawn = false;
      const controller = new AbortController();
      const interrupt = () => controller.abort();
      process.once("SIGINT", interrupt);
      try {
        const report = await runLoad({
          address: opts.grpc,
          durationMs: opts.duration,
          concurrency: opts.concurrency,
          connections: opts.connections,
          timeoutMs: opts.timeout,
          threads: opts.threads,
          signal: controller.signal,
          ...(opts.rate !== undefined && { rate: opts.rate }),
          onProgress: (p) => {
            if (opts.quiet) return;
            const line = `load: ${(p.elapsedMs / 1000).toFixed(0)} s, ${p.requests} calls, ${Math.round(p.requestsPerSecond)}/s, ${p.errors} errors`;
            // Redrawn in place on a terminal; in a log (CI, a pipe) one line a second, so a long run shows it is alive.
            io.stderr(live ? `\r${line}\x1b[K` : `${line}\n`);
            drawn = true;
          },
        });
        if (live && drawn) io.stderr("\n");
        io.stdout(formatLoadReport(report, io.isTty));
        await json?.write(`${JSON.stringify(report, null, 2)}\n`);
        // Errors by status, replies that differ, or nothing compared at all (a run that judged nothing never passes).
        const failed = report.stateless.mismatches > 0 || Object.keys(report.errors).length > 0 || report.stateless.compared === 0;
        setExit(failed ? 1 : 0);
      } finally {
        process.off("SIGINT", interrupt);
        await json?.close();
      }
    });
}
