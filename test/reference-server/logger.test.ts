// The reference server's logger: JSON lines with the level by name, secrets redacted, quiet unless asked.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../reference-server/logger.js";
import { startReferenceServer } from "../../reference-server/start.js";

describe("reference server logger", () => {
  it("writes one JSON line per entry, level by name, and never the value of a secret key", () => {
    const lines: string[] = [];
    const log = createLogger({ log: "debug", logSink: (l) => void lines.push(l) }, "info");
    log.debug({
      msg: "request",
      apiKey: "s3cret-1",
      headers: { authorization: "Bearer s3cret-2", "x-api-key": "s3cret-3" },
      path: "/messages",
    });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: "debug", msg: "request", path: "/messages", apiKey: "[redacted]" });
    expect(lines.join("")).not.toMatch(/s3cret/);
  });

  it(
    "startReferenceServer logs into a logger it is given, redacted there too (without one it is silent: " +
      "test/package.test.ts)",
    async () => {
      const lines: string[] = [];
      const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(l) });
      const server = await startReferenceServer({ grpcPort: 0, httpPort: 0, logger, apiKey: "s3cret-4" });
      await server.close();
      expect(lines.join("")).toContain("grpc listening");
      expect(lines.join("")).toContain("http listening");
      expect(lines.join("")).not.toContain("s3cret");
    },
  );
});
