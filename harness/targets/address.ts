// Parses a gRPC target address as users write it: host:port, dns:///host:port, unix:///path, [v6]:port.
import { ConformanceError } from "../errors.js";
import { hasCredentials, withoutCredentials } from "../_internals/url-credentials.js";
import { endpointOf, parseHttpBaseUrl } from "./http-base-url.js";

export type ParsedAddress =
  | { kind: "tcp"; host: string; port: number /** the string grpc-js is given */; grpcTarget: string }
  | { kind: "unix"; path: string; grpcTarget: string };

export function parseAddress(address: string, flag = "--grpc"): ParsedAddress {
  const bad = (why: string) => new ConformanceError("usage", `${flag} ${address}: ${why}`);
  if (address.startsWith("unix://")) {
    const path = address.slice("unix://".length);
    if (!path.startsWith("/")) throw bad("a unix target needs an absolute path (unix:///path/to/socket)");
    return { kind: "unix", path, grpcTarget: `unix://${path}` };
  }
  const rest = address.startsWith("dns:///") ? address.slice("dns:///".length) : address;
  if (rest.includes("://")) throw bad("expected host:port, dns:///host:port or unix:///path");
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/\s[\]]+)):(\d{1,5})$/.exec(rest);
  if (!m) throw bad("expected host:port, dns:///host:port or unix:///path");
  const host = (m[1] ?? m[2]) as string;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) throw bad(`port ${port} is out of range 1-65535`);
  return { kind: "tcp", host, port, grpcTarget: m[1] ? `ipv6:[${host}]:${port}` : `dns:///${host}:${port}` };
}

/** Whether the address is this machine (loopback or a unix socket): such targets get no rate limit by default. */
export function isLocal(parsed: ParsedAddress): boolean {
  if (parsed.kind === "unix") return true;
  return parsed.host === "localhost" || /^127\./.test(parsed.host) || parsed.host === "::1";
}

/** An http(s):// base URL of an RPC target over HTTP (Connect, gRPC-Web), and its host and port as an address. */
export function parseRpcUrl(url: string, flag: string): { url: URL; address: ParsedAddress } {
  // The URL is echoed in errors: one that carries credentials is refused without them.
  if (hasCredentials(url))
    throw new ConformanceError(
      "usage",
      `${flag} ${withoutCredentials(url)}: credentials in the URL are not supported (give them with --metadata)`,
    );
  const parsed = parseHttpBaseUrl(url, flag);
  // URL.hostname keeps an IPv6 address's brackets, as parseAddress wants them.
  return { url: parsed, address: parseAddress(`${parsed.hostname}:${endpointOf(parsed).port}`, flag) };
}
