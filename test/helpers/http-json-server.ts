// Starts json-server 0.17 (a REST server nobody here wrote) in process on 127.0.0.1:0 with an in-memory { messages: []
// }.
import { createRequire } from "node:module";
import type * as http from "node:http";
import { listen } from "../../fixtures/broken-servers/http/_base/server.js";
import type { StartedHttpServer } from "../../fixtures/broken-servers/http/types.js";

/** The part of json-server's programmatic API a new user reaches for first (its README's "Module" section). */
interface JsonServerModule {
  create(): { use(handler: unknown): void } & http.RequestListener;
  router(db: Record<string, unknown>): unknown;
  defaults(options?: { logger?: boolean }): unknown[];
}

const require = createRequire(import.meta.url);

export async function startJsonServer(): Promise<StartedHttpServer> {
  const jsonServer = require("json-server") as JsonServerModule;
  const app = jsonServer.create();
  // Its defaults (static files, CORS, no-cache headers, body parser) as its README shows, without the request log.
  app.use(jsonServer.defaults({ logger: false }));
  app.use(jsonServer.router({ messages: [] }));
  const { createServer } = await import("node:http");
  return listen(createServer(app));
}
