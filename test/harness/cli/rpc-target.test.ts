// The RPC target the flags name is read from PROTOCOLS: one a run whatever the protocol, its address checked by its
// module's rules, and the protocol the run speaks set from the flag that named it.
import { describe, expect, it } from "vitest";
import { parseCheckArgs } from "../../../harness/cli/check-options.js";
import { checkUsage } from "../../../harness/cli/check-usage.js";
import { builtInOptionKey, optionKey, rpcOptionRows, rpcTargetsOf } from "../../../harness/cli/rpc-target.js";
import { PROTOCOL_NAMES, PROTOCOLS } from "../../../harness/protocols/index.js";
import { toRunOptions } from "../../../harness/cli/run-options.js";

describe("the RPC target of a run", () => {
  it("has one option row per protocol in the map, keyed as commander files its flag (the key the options type names)", () => {
    // RpcTargetOptions types the built-in keys from the names: each flag must be --NAME for that type to hold.
    for (const [name, m] of Object.entries(PROTOCOLS)) expect(m.cli.flag).toBe(`--${name}`);
    expect(Object.values(PROTOCOLS).map(optionKey)).toEqual(["grpc", "connect", "grpcWeb"]);
    expect(PROTOCOL_NAMES.map(builtInOptionKey)).toEqual(["grpc", "connect", "grpcWeb"]);
    expect(Object.entries(rpcOptionRows()).map(([key, row]) => [key, row.flags])).toEqual([
      ["grpc", "--grpc <address>"],
      ["connect", "--connect <url>"],
      ["grpcWeb", "--grpc-web <url>"],
    ]);
  });

  it("is named by any protocol's flag, and the run speaks that protocol", () => {
    const web = parseCheckArgs(["--grpc-web", "http://127.0.0.1:8080"]);
    expect(rpcTargetsOf(web)).toEqual([{ protocol: "grpc-web", flag: "--grpc-web", address: "http://127.0.0.1:8080" }]);
    expect(toRunOptions(web, "http://127.0.0.1:8080").grpc?.protocol).toBe("grpc-web");
    const grpc = parseCheckArgs(["--grpc", "127.0.0.1:50051"]);
    expect(toRunOptions(grpc, "127.0.0.1:50051").grpc).not.toHaveProperty("protocol");
  });

  it("combines: several protocols' flags name several targets of one run", () => {
    expect(() =>
      checkUsage(
        parseCheckArgs([
          "--grpc",
          "127.0.0.1:1",
          "--connect",
          "http://127.0.0.1:2",
          "--grpc-web",
          "http://127.0.0.1:2",
        ]),
      ),
    ).not.toThrow();
  });

  it("is checked by its protocol's address rules, naming the flag", () => {
    expect(() => checkUsage(parseCheckArgs(["--connect", "127.0.0.1:2"]))).toThrow(/--connect/);
    expect(() => checkUsage(parseCheckArgs(["--grpc", "http://127.0.0.1:2"]))).toThrow(/--grpc/);
  });
});
