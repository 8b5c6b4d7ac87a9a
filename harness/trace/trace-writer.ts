// `check --trace DIR`: keeps each check's exchanges while it runs and, for a check that failed or erred, writes them
// into DIR: <check-id>.har for HTTP, Connect and gRPC-Web, <check-id>.grpc.txt for gRPC. Passing and skipped checks
// write nothing. Bounded per body, per check and per run; whatever was left out, the file says so.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { ConformanceError } from "../errors.js";
import { shownAsText } from "./_internals/bodies.js";
import { createInert, type Redact } from "./_internals/inert.js";
import { buildGrpcText } from "./grpc-text.js";
import { buildHar } from "./har.js";
import type { TraceSink } from "./exchange-record.js";
import { CheckTrace, DEFAULT_TRACE_LIMITS, sinkOf, type KeptExchange, type TraceLimits } from "./recorder.js";

export interface TraceOptions {
  /** The folder the trace files go to, as the user gave it. */
  dir: string;
  /**
   * The folder the report that names the files is in: a relative DIR is named relative to it. Default the working
   * directory.
   */
  linkFrom?: string;
  limits?: Partial<TraceLimits>;
}

export interface TraceWriter {
  /** Runs one check's run with its exchanges kept: run gives the sink to every call the check makes. */
  around<T>(checkId: string, run: (sink: TraceSink) => Promise<T>): Promise<T>;
  /**
   * Writes the check's trace when it failed or erred and made any exchange, and forgets it either way. Returns the
   * file's name for the report: absolute when DIR was, else relative to the report's folder.
   */
  finish(
    checkId: string,
    outcome: { status: string; message: string },
    grpcurlFor?: (e: KeptExchange) => string | undefined,
  ): string | undefined;
}

/** Check IDs are the catalogue's own, but a file name is made safe whatever it is given. */
const fileStem = (id: string): string =>
  id
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^\.+/, "_")
    .slice(0, 200);

/** Makes DIR (a usage error, one line, when it cannot be), before the first call. */
export function createTraceWriter(options: TraceOptions, redact: Redact = (t) => t): TraceWriter {
  const limits: TraceLimits = { ...DEFAULT_TRACE_LIMITS, ...options.limits };
  const dir = resolve(options.dir);
  try {
    mkdirSync(dir, { recursive: true });
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
  } catch (err) {
    const why = err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : String(err);
    throw new ConformanceError("usage", `--trace ${options.dir}: cannot make a folder there (${why})`);
  }
  const inert = createInert(redact);
  const traces = new Map<string, CheckTrace>();
  let written = 0;

  const render = (
    checkId: string,
    kept: readonly KeptExchange[],
    grpc: boolean,
    heading: { status: string; message: string },
    cuts: string[],
    grpcurlFor: (e: KeptExchange) => string | undefined,
  ) =>
    grpc
      ? buildGrpcText(kept, { checkId, ...heading, cuts }, inert, grpcurlFor)
      : buildHar(kept, { checkId, ...heading, cuts }, inert, limits.maxBodyBytes);

  return {
    around(checkId, run) {
      const trace = new CheckTrace(limits);
      traces.set(checkId, trace);
      return run(sinkOf(trace));
    },
    finish(checkId, outcome, grpcurlFor = () => undefined) {
      const trace = traces.get(checkId);
      traces.delete(checkId);
      if (!trace || (outcome.status !== "fail" && outcome.status !== "error") || trace.exchanges.length === 0)
        return undefined;
      // One file per check: gRPC exchanges as text when the check made any, else the HTTP ones as HAR.
      const grpc = trace.exchanges.some((e) => shownAsText(e.protocol));
      const all = trace.exchanges.filter((e) => shownAsText(e.protocol) === grpc);
      const cuts: string[] = [];
      if (trace.dropped > 0)
        cuts.push(
          `cut: ${trace.dropped} earlier exchange(s) left out; the last ${limits.maxExchanges} are kept (--trace ` +
            `keeps ${limits.maxExchanges} per check)`,
        );
      const other = trace.exchanges.length - all.length;
      if (other > 0) cuts.push(`${other} exchange(s) over ${grpc ? "HTTP" : "gRPC"} not shown here`);
      let kept = all;
      let text = render(checkId, kept, grpc, outcome, cuts, grpcurlFor);
      // The run's bound: the newest exchanges that fit in what is left of it, halving; at worst none, saying so.
      const left = limits.maxRunBytes - written;
      while (Buffer.byteLength(text) > left && kept.length > 0) {
        kept = kept.slice(Math.ceil(kept.length / 2));
        const runCut =
          `cut: the run's trace files reached their bound (${limits.maxRunBytes} bytes): ${kept.length} of ` +
          `${all.length} exchange(s) kept, the last`;
        text = render(checkId, kept, grpc, outcome, [...cuts, runCut], grpcurlFor);
      }
      const name = `${fileStem(checkId)}${grpc ? ".grpc.txt" : ".har"}`;
      const path = join(dir, name);
      try {
        writeFileSync(path, text);
      } catch (err) {
        throw new ConformanceError(
          "usage",
          `--trace ${options.dir}: cannot write ${name} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        );
      }
      written += Buffer.byteLength(text);
      return isAbsolute(options.dir) ? path : relative(resolve(options.linkFrom ?? "."), path);
    },
  };
}
