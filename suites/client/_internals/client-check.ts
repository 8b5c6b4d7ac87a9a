// What every client check shares: its declaration beside the scenario it runs, the scenario run once per run of the
// harness (checks that judge the same scenario share it), and the words of a failure that names its request.
import type { CheckContext, CheckDefinition, CheckOutcome, Severity } from "../../../harness/check.js";
import { fail } from "../../../harness/check.js";
import {
  describeRequest,
  isHello,
  requestName,
  type RecordedRequest,
} from "../../../harness/client/recorded-request.js";
import { runScenario, type ClientUnderTest, type ScenarioRun } from "../../../harness/client/run-scenario.js";
import { SCENARIOS, type ScenarioName } from "../../../harness/client/scenarios.js";

/** Runs a scenario for a check; the same scenario runs once however many checks judge it. */
export type ScenarioSource = (name: ScenarioName) => Promise<ScenarioRun>;

export interface ClientCheck {
  id: string;
  title: string;
  severity: Severity;
  spec: string;
  /** The scenario whose run it judges. */
  scenario: ScenarioName;
  judge(run: ScenarioRun, scenarios: ScenarioSource): CheckOutcome | Promise<CheckOutcome>;
}

export const hellos = (run: ScenarioRun): RecordedRequest[] => run.requests.filter(isHello);

/** Why a check of how a client copes skips when the client called nothing: another check judges that. */
export const NO_HELLO = "the client made no Hello call: nothing to judge (client.hello.succeeds judges that)";

/** How the client ended, in words: "exited 0", "exited 1", "was killed by SIGSEGV", "hung: killed after 10 s". */
export function endWords(run: ScenarioRun): string {
  const c = run.client;
  if (c.hung) return `did not exit within ${run.timeoutMs} ms: its process group was killed at the bound (hung)`;
  return c.exitCode !== null ? `exited ${c.exitCode}` : `was killed by ${c.signal ?? "a signal"}`;
}

export const succeeded = (run: ScenarioRun): boolean => !run.client.hung && run.client.exitCode === 0;

/** The client's own last words, redacted and bounded (run-client keeps the tails). */
function outputLines(run: ScenarioRun): string[] {
  const lines: string[] = [];
  for (const [name, text] of [
    ["stderr", run.client.stderr],
    ["stdout", run.client.stdout],
  ] as const) {
    const shown = run.redact(text.trim());
    if (shown !== "") lines.push(`client ${name} (last bytes): ${shown}`);
  }
  return lines;
}

/** A failure naming the request that shows it, with its headers, the scenario, and what the client said. */
export function failWith(message: string, run: ScenarioRun, request: RecordedRequest | undefined): CheckOutcome {
  const named = request !== undefined ? `${message}: ${requestName(request, run.redact)}` : message;
  return fail(run.redact(named), {
    details: [
      `scenario ${run.scenario.name}: ${run.scenario.plays}`,
      `the client ${endWords(run)}, after ${run.received} ` +
        `request(s)${run.received > run.requests.length ? ` (the first ${run.requests.length} recorded)` : ""}`,
      ...(request !== undefined ? describeRequest(request, run.redact, run.apiKey) : []),
      ...outputLines(run),
    ],
  });
}

/** The check as the engine runs it: its scenario from the run's memo, so one client run serves every check of it. */
export function toDefinition(check: ClientCheck, client: ClientUnderTest): CheckDefinition {
  return {
    id: check.id,
    title: check.title,
    severity: check.severity,
    area: "client",
    profile: "contract",
    spec: check.spec,
    async run(ctx: CheckContext) {
      const scenarios: ScenarioSource = (name) => {
        const key = `client:${name}`;
        let run = ctx.memo.get(key) as Promise<ScenarioRun> | undefined;
        if (run === undefined) {
          run = runScenario(client, SCENARIOS[name], ctx.signal);
          ctx.memo.set(key, run);
        }
        return run;
      };
      return check.judge(await scenarios(check.scenario), scenarios);
    },
  };
}
