// One scenario, end to end: its recording servers started, the client run once against them with its targets in
// the environment, the servers closed; what the client sent and how it ended, as data for the checks to judge.
import { redactor, type RecordedRequest } from "./recorded-request.js";
import { startRecordingServers } from "./recording-servers.js";
import { runClient, type ClientCommand, type ClientRun } from "./run-client.js";
import type { Scenario } from "./scenarios.js";

/** The client under check, as check-client was given it. */
export interface ClientUnderTest {
  command: ClientCommand;
  /** Handed to the client as EXAMPLE_API_KEY; the api-key scenario's servers then require it on every request. */
  apiKey?: string;
  /** Bound on one run of the client. */
  timeoutMs: number;
  /** The environment the client inherits, before its targets are added. */
  env: Readonly<Record<string, string | undefined>>;
}

export interface ScenarioRun {
  scenario: Scenario;
  client: ClientRun;
  /** What the servers kept, in order. */
  requests: RecordedRequest[];
  /** Requests received, kept or not (past MAX_RECORDED_REQUESTS only counted). */
  received: number;
  /** Bound on the client's run, for the words of a hung client. */
  timeoutMs: number;
  /** The key the client was handed, if any (the api-key scenario judges every request by it). */
  apiKey?: string;
  /** Replaces the run's API key in any text bound for a report. */
  redact: (text: string) => string;
}

/** The client's environment: what it inherits, its targets, and the key only when the run has one. */
export function clientEnv(client: ClientUnderTest, grpcTarget: string, httpUrl: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...client.env, EXAMPLE_GRPC_TARGET: grpcTarget, EXAMPLE_HTTP_URL: httpUrl };
  if (client.apiKey !== undefined) env.EXAMPLE_API_KEY = client.apiKey;
  else delete env.EXAMPLE_API_KEY;
  return env;
}

export async function runScenario(
  client: ClientUnderTest,
  scenario: Scenario,
  signal?: AbortSignal,
): Promise<ScenarioRun> {
  const servers = await startRecordingServers({
    scenario,
    ...(client.apiKey !== undefined && { apiKey: client.apiKey }),
  });
  try {
    const run = await runClient(
      client.command,
      clientEnv(client, servers.grpcTarget, servers.httpUrl),
      client.timeoutMs,
      signal,
    );
    return {
      scenario,
      client: run,
      requests: [...servers.requests],
      received: servers.received(),
      ...(client.apiKey !== undefined && { apiKey: client.apiKey }),
      timeoutMs: client.timeoutMs,
      redact: redactor(client.apiKey),
    };
  } finally {
    await servers.close();
  }
}
