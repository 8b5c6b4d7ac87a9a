// The run's TLS settings as node:tls's connect options (harness/wire/tls.ts): the server name sent only when it is
// a DNS name (RFC 6066 §3 allows no IP address), whatever form the authority takes; ALPN only when the caller names
// protocols; verification off only when asked.
import { describe, expect, it } from "vitest";
import { tlsConnectOptions } from "../../../harness/wire/tls.js";

const nameOf = (serverName: string | undefined) => tlsConnectOptions({ serverName, alpn: ["h2"] }).servername;

describe("tlsConnectOptions", () => {
  it("sends a DNS name as the server name, without the authority's port", () => {
    expect(nameOf("example.com")).toBe("example.com");
    expect(nameOf("example.com:8443")).toBe("example.com");
    expect(nameOf("localhost:")).toBe("localhost");
  });

  it("sends no server name for an IP address, in any form an authority or a URL's host gives it", () => {
    for (const ip of ["127.0.0.1", "127.0.0.1:443", "::1", "[::1]", "[::1]:50051", "2001:db8::1"])
      expect(nameOf(ip), ip).toBeUndefined();
    expect(nameOf(undefined)).toBeUndefined();
    expect(nameOf("")).toBeUndefined();
  });

  it("carries the material given, ALPN only when named, and verifies unless told not to", () => {
    const ca = Buffer.from("ca");
    const options = tlsConnectOptions({ material: { ca } });
    expect(options).toEqual({ ca });
    expect(tlsConnectOptions({ alpn: ["h2", "http/1.1"] }).ALPNProtocols).toEqual(["h2", "http/1.1"]);
    expect(tlsConnectOptions({ alpn: ["h2"], verify: false }).rejectUnauthorized).toBe(false);
  });
});
