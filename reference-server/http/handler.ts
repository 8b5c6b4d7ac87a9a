// The reference HTTP interface as a Node request handler, with no socket: the same fastify app, routes, hooks and
// protections as startHttpServer (server.ts), for an in-memory HTTP target (harness/targets/http-inject.ts).
import type { IncomingMessage, ServerResponse } from "node:http";
import { buildHttpApp, type HttpServerOptions } from "./server.js";

export interface ReferenceHttpHandler {
  /** Serves one request as the listening server would, past its connection gate (which needs a socket). */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** Stops the app and its shedder's watch. */
  close(): Promise<void>;
}

/** The reference's routes over the options startHttpServer takes (host and port are not used: nothing listens). */
export async function createReferenceHttpHandler(options: HttpServerOptions = {}): Promise<ReferenceHttpHandler> {
  const { app, shedder } = await buildHttpApp({ log: "silent", ...options });
  await app.ready();
  return {
    handler: (req, res) => app.routing(req, res),
    async close() {
      try {
        await app.close();
      } finally {
        shedder.stop();
      }
    },
  };
}
