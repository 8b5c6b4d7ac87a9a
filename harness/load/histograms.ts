// Latency histograms of a load run: percentiles in milliseconds, and HdrHistogram's compressed encoded form, which a
// JSON report keeps so that runs from several machines can be merged into one set of figures (`load merge`).
import { inflateSync } from "node:zlib";
import { decodeFromCompressedBase64, encodeIntoCompressedBase64, type Histogram } from "hdr-histogram-js";
import { ConformanceError } from "../errors.js";
import { newHistogram } from "./_internals/drive.js";

export interface LatencyFigures {
  p50: number;
  p90: number;
  p99: number;
  "p99.9": number;
  max: number;
  mean: number;
}

const ms = (us: number) => Math.round(us) / 1000;

/** Milliseconds at a percentile (0-100), or the max or mean, from a histogram of microseconds. */
export function latencyAt(h: Histogram, statistic: number | "max" | "mean"): number {
  if (statistic === "max") return ms(h.maxValue);
  if (statistic === "mean") return ms(h.totalCount === 0 ? 0 : h.mean);
  // HdrHistogram answers a percentile with the highest value its bucket stands for, which can pass the largest
  // value recorded (p99 100.223 ms beside a max of 100.191): no percentile is shown above the max.
  return ms(Math.min(h.getValueAtPercentile(statistic), h.maxValue));
}

export function latencyFigures(h: Histogram): LatencyFigures {
  return {
    p50: latencyAt(h, 50),
    p90: latencyAt(h, 90),
    p99: latencyAt(h, 99),
    "p99.9": latencyAt(h, 99.9),
    max: latencyAt(h, "max"),
    mean: latencyAt(h, "mean"),
  };
}

export const encodeHistogram = (h: Histogram): string => encodeIntoCompressedBase64(h);

/** An encoded histogram is at most this long: ours are a few hundred characters. */
const MAX_ENCODED_CHARS = 1 << 20;
/** Its inflated form at most this large, and its range at most this (microseconds, about 2.8 hours). */
const MAX_INFLATED_BYTES = 8 << 20;
const MAX_TRACKABLE_US = 1e10;
const V2_COMPRESSED_COOKIE = 0x1c849314;
const V2_COOKIE = 0x1c849313;

/**
 * Decodes an encoded histogram from a file that may be anyone's: bounded in characters, in inflated bytes and in
 * the counts array its header would make the decoder allocate, before hdr-histogram-js sees it.
 */
export function decodeHistogram(encoded: unknown, where: string): Histogram {
  if (
    typeof encoded !== "string" ||
    encoded.length === 0 ||
    encoded.length > MAX_ENCODED_CHARS ||
    !/^[A-Za-z0-9+/]+=*$/.test(encoded)
  ) {
    throw new ConformanceError(
      "usage",
      `${where}: not an encoded histogram (HdrHistogram's compressed base64, at most ${MAX_ENCODED_CHARS} characters)`,
    );
  }
  const bytes = Buffer.from(encoded, "base64");
  let header: Buffer;
  try {
    if (bytes.length < 8 || bytes.readUInt32BE(0) !== V2_COMPRESSED_COOKIE)
      throw new Error("not a V2 compressed histogram");
    header = inflateSync(bytes.subarray(8), { maxOutputLength: MAX_INFLATED_BYTES });
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `${where}: not an encoded histogram (${err instanceof Error ? err.message : String(err)})`,
    );
  }
  // V2: cookie, payload length, normalizing offset, significant digits, lowest (8 bytes), highest (8 bytes), ratio.
  const digits = header.length >= 40 && header.readUInt32BE(0) === V2_COOKIE ? header.readInt32BE(12) : -1;
  const highest = header.length >= 40 ? Number(header.readBigInt64BE(24)) : -1;
  if (!(digits >= 1 && digits <= 3 && highest >= 1 && highest <= MAX_TRACKABLE_US)) {
    throw new ConformanceError(
      "usage",
      `${where}: an encoded histogram outside what a load run records (${digits} significant digits, up to ` +
        `${highest} µs)`,
    );
  }
  try {
    const decoded = decodeFromCompressedBase64(encoded);
    // Copied into the shape every run uses, so that any two add up.
    const h = newHistogram();
    h.add(decoded);
    decoded.destroy();
    return h;
  } catch (err) {
    throw new ConformanceError(
      "usage",
      `${where}: not an encoded histogram (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}
