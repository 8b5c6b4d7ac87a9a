// Target addresses as users write them, and the one-line errors for the ones that cannot work.
import { describe, expect, it } from "vitest";
import { isLocal, parseAddress, parseRpcUrl } from "../../../harness/targets/address.js";

describe("parseAddress", () => {
  it.each([
    ["127.0.0.1:50051", { kind: "tcp", host: "127.0.0.1", port: 50051, grpcTarget: "dns:///127.0.0.1:50051" }],
    ["dns:///localhost:8443", { kind: "tcp", host: "localhost", port: 8443, grpcTarget: "dns:///localhost:8443" }],
    ["[::1]:50051", { kind: "tcp", host: "::1", port: 50051, grpcTarget: "ipv6:[::1]:50051" }],
    ["unix:///run/example.sock", { kind: "unix", path: "/run/example.sock", grpcTarget: "unix:///run/example.sock" }],
  ])("parses %s", (input, expected) => {
    expect(parseAddress(input)).toEqual(expected);
  });

  it.each([
    ["localhost", /expected host:port/],
    ["http://localhost:80", /expected host:port/],
    ["localhost:0", /port 0 is out of range/],
    ["localhost:70000", /port 70000 is out of range/],
    ["unix://relative.sock", /absolute path/],
  ])("refuses %s with a usage error", (input, message) => {
    expect(() => parseAddress(input)).toThrow(message);
    try {
      parseAddress(input);
    } catch (err) {
      expect(err).toMatchObject({ code: "usage", message: expect.stringContaining(`--grpc ${input}: `) });
    }
  });

  it("tells loopback and sockets from other hosts", () => {
    expect(isLocal(parseAddress("127.0.0.9:1"))).toBe(true);
    expect(isLocal(parseAddress("localhost:1"))).toBe(true);
    expect(isLocal(parseAddress("unix:///s"))).toBe(true);
    expect(isLocal(parseAddress("grpc.example.com:443"))).toBe(false);
  });
});

describe("parseRpcUrl (--connect, --grpc-web)", () => {
  it("reads host and port from a base URL, the scheme's port when none is given", () => {
    expect(parseRpcUrl("http://127.0.0.1:8080/api", "--connect").address).toMatchObject({
      kind: "tcp",
      host: "127.0.0.1",
      port: 8080,
    });
    expect(parseRpcUrl("https://[::1]", "--grpc-web").address).toMatchObject({ kind: "tcp", host: "::1", port: 443 });
  });

  it("refuses credentials in the URL without echoing them, and what is no http(s) base URL", () => {
    expect(() => parseRpcUrl("http://user:s3cret@h:1", "--connect")).toThrow(
      /^--connect http:\/\/<CREDENTIALS>@h:1: credentials in the URL are not supported \(give them with --metadata\)$/,
    );
    expect(() => parseRpcUrl("http://user:s3cret@h:1", "--connect")).not.toThrow(/s3cret/);
    expect(() => parseRpcUrl("ftp://h", "--connect")).toThrow(/only http and https/);
    expect(() => parseRpcUrl("http://h:1/?q=1", "--grpc-web")).toThrow(/no query or fragment/);
  });
});
