// The HTTP target's base URL as the user gives it: checked once, and read for the host and port to connect to.
import { ConformanceError } from "../errors.js";

/** Validates a base URL as the user gave it: http or https, a host, no credentials, query or fragment. */
export function parseHttpBaseUrl(baseUrl: string, flag = "--http"): URL {
  const bad = (why: string) => new ConformanceError("usage", `${flag} ${baseUrl}: ${why}`);
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw bad("not a valid URL (expected http://host:port or https://host[:port][/prefix])");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw bad(`only http and https URLs are supported, not ${url.protocol}`);
  if (url.hostname === "") throw bad("the URL has no host");
  if (url.username !== "" || url.password !== "") throw bad("credentials in the URL are not supported (use --api-key)");
  if (url.search !== "" || url.hash !== "") throw bad("a base URL carries no query or fragment");
  return url;
}

/** Where to connect: the host without IPv6 brackets, and the port the scheme implies when none is given. */
export function endpointOf(url: URL): { host: string; port: number } {
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port),
  };
}
