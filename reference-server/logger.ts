// The reference server's one logger: pino, JSON lines with the level by name, secrets redacted by key.
import { pino, type Logger } from "pino";

export type LogLevel = "silent" | "info" | "debug";
export type { Logger };

export interface LogOptions {
  /** debug: one line per call or request (never bodies or keys); info: start and stop; silent: nothing. */
  log?: LogLevel;
  /** Where log lines go; default stderr. */
  logSink?: (line: string) => void;
  /** A logger of the caller's; it wins over log and logSink (redaction still applies). */
  logger?: Logger;
}

/** Whatever a log call is handed under these keys is never written. */
export const REDACTED_KEYS: readonly string[] = [
  "apiKey",
  "password",
  "authorization",
  "cookie",
  "*.apiKey",
  "*.password",
  "*.authorization",
  "*.cookie",
  '*["x-api-key"]',
  '*["set-cookie"]',
];

const REDACT = { paths: [...REDACTED_KEYS], censor: "[redacted]" };

export function createLogger(options: LogOptions, defaultLevel: LogLevel): Logger {
  if (options.logger) return options.logger.child({}, { redact: REDACT });
  const sink = options.logSink;
  return pino(
    {
      level: options.log ?? defaultLevel,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: REDACT,
    },
    sink ? { write: (line: string) => sink(line) } : pino.destination({ fd: 2, sync: true }),
  );
}
