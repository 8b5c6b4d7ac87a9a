// $EXAMPLE_CONFORMANCE_TIMELINE: the run's timeline on stderr, for measuring where a run's time goes (bench, issue 43),
// one line per event with the milliseconds since the process started and the CPU milliseconds it has used; nothing
// without it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMessage, encodeMessage } from "../../../common/message.js";
import { cli } from "../../helpers/cli.js";
import { startGrpcJsServer, type TestServer } from "../../helpers/grpc-js-server.js";

let good: TestServer;

beforeAll(async () => {
  good = await startGrpcJsServer((req) => {
    const d = decodeMessage(req);
    return d.ok ? Buffer.from(encodeMessage(`hi ${d.message.body}`)) : { code: 13, details: d.reason };
  });
});
afterAll(async () => {
  await good.close();
});

const args = () => ["check", "--grpc", good.address, "--only", "grpc.errors.*", "--quiet"];
const LINE = /^timeline (\d+\.\d) (\d+\.\d) (.+)$/;

describe("EXAMPLE_CONFORMANCE_TIMELINE", () => {
  it("writes each check's start and end, and the run's, in order, with times that do not go back", async () => {
    const run = await cli(args(), { EXAMPLE_CONFORMANCE_TIMELINE: "1" });
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split("\n");
    for (const line of lines) expect(line).toMatch(LINE);
    const events = lines.map((l) => (l.match(LINE) as RegExpMatchArray)[3]);
    expect(events[0]).toBe("check command loaded");
    expect(events.at(-1)).toBe("run end");
    for (const id of ["grpc.errors.unknown-method", "grpc.errors.unknown-service"]) {
      expect(events.indexOf(`start ${id}`)).toBeGreaterThan(events.indexOf("run start"));
      expect(events.indexOf(`end ${id}`)).toBeGreaterThan(events.indexOf(`start ${id}`));
    }
    const times = lines.map((l) => Number((l.match(LINE) as RegExpMatchArray)[1]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("writes nothing when unset or empty", async () => {
    for (const env of [{}, { EXAMPLE_CONFORMANCE_TIMELINE: "" }]) {
      const run = await cli(args(), env);
      expect(run.code).toBe(0);
      expect(run.stderr).not.toMatch(/timeline/);
    }
  });
});
