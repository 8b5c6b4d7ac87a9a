// Every string of the target's, and every string that may hold a secret of the run, goes through here before it is
// put into a trace: the run's secrets replaced, then neutralised as the reporters do
// (harness/_internals/neutralise.ts).
import { neutralise } from "../../_internals/neutralise.js";
import type { TraceHeaders } from "../exchange-record.js";

/** Longest header value, URL or status line kept whole in a trace. */
export const MAX_LINE_BYTES = 8 * 1024;

export type Redact = (text: string) => string;

export interface Inert {
  /** One line: a header, a URL, a status text. */
  line(text: string): string;
  /** Text that may run over lines (a body): line feeds kept, bounded by the body bound. */
  text(text: string, max: number): string;
  /** Headers as name/value pairs, each inert, in the order they came. */
  headers(headers: TraceHeaders | undefined): { name: string; value: string }[];
}

export function createInert(redact: Redact): Inert {
  const line = (text: string) => neutralise(redact(text), { max: MAX_LINE_BYTES });
  return {
    line,
    text: (text, max) => neutralise(redact(text), { multiline: true, max }),
    headers: (headers) =>
      Object.entries(headers ?? {}).flatMap(([name, v]) =>
        v === undefined
          ? []
          : (Array.isArray(v) ? (v as readonly string[]) : [String(v)]).map((value) => ({
              name: line(name),
              value: line(value),
            })),
      ),
  };
}
