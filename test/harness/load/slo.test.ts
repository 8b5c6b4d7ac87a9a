// SLO terms as written, judged against figures, and the encoded histograms `load merge` reads from anyone's file.
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { newHistogram } from "../../../harness/load/_internals/drive.js";
import { decodeHistogram, encodeHistogram } from "../../../harness/load/histograms.js";
import { judgeSlo, parseSlo, type SloFigures } from "../../../harness/load/slo.js";

const figures = (over: Partial<SloFigures> = {}): SloFigures => ({
  latency: (s) => (s === "max" ? 40 : s === "mean" ? 5 : s >= 99 ? 25 : 3),
  latencyKind: "measured",
  requests: 1000,
  errors: 2,
  shed: 30,
  requestsPerSecond: 900,
  ...over,
});

describe("parseSlo", () => {
  it("reads percentiles, max and mean in us, ms and s, shares in percent and calls a second", () => {
    expect(parseSlo("p99<20ms, p99.9<=1s,max<500us,errors<0.1%,shed<5%,rps>=800", "--slo")).toEqual([
      { text: "p99<20ms", metric: "latency", statistic: 99, op: "<", threshold: 20 },
      { text: "p99.9<=1s", metric: "latency", statistic: 99.9, op: "<=", threshold: 1000 },
      { text: "max<500us", metric: "latency", statistic: "max", op: "<", threshold: 0.5 },
      { text: "errors<0.1%", metric: "errors", op: "<", threshold: 0.1 },
      { text: "shed<5%", metric: "shed", op: "<", threshold: 5 },
      { text: "rps>=800", metric: "rps", op: ">=", threshold: 800 },
    ]);
  });

  it.each([
    ["p99<20", /p99<20: a latency needs its unit/],
    ["errors<0.1", /errors is a share of the calls: write it as a percentage \(errors<0.1%\)/],
    ["errors<150%", /a percentage is at most 100/],
    ["rps>10ms", /rps is calls a second/],
    ["p101<1ms", /"p101<1ms" is not a threshold/],
    ["latency<1ms", /is not a threshold: expected terms like p99<20ms/],
    ["p99<20ms,", /"" is not a threshold/],
  ])("refuses %j with one line saying why", (text, message) => {
    expect(() => parseSlo(text, "--slo")).toThrow(message);
  });
});

describe("judgeSlo", () => {
  it("sets each figure beside its threshold and says met or missed", () => {
    const results = judgeSlo(
      parseSlo("p99<20ms,p50<10ms,errors<0.1%,errors<1%,shed<1%,rps>=800,max<=40ms", "--slo"),
      figures(),
    );
    expect(results.map((r) => [r.term, r.figure, r.threshold, r.met])).toEqual([
      ["p99<20ms", 25, 20, false],
      ["p50<10ms", 3, 10, true],
      ["errors<0.1%", 0.2, 0.1, false],
      ["errors<1%", 0.2, 1, true],
      ["shed<1%", 3, 1, false],
      ["rps>=800", 900, 800, true],
      ["max<=40ms", 40, 40, true],
    ]);
    expect(results[0]?.of).toBe("measured latency");
    expect(results[2]?.of).toBe("2 of 1000 calls");
  });

  it("never passes a latency or a share of a run that made no call", () => {
    const results = judgeSlo(
      parseSlo("p99<20ms,errors<1%", "--slo"),
      figures({ requests: 0, errors: 0, latency: () => 0 }),
    );
    expect(results.map((r) => r.met)).toEqual([false, false]);
  });
});

describe("decodeHistogram", () => {
  it("gives back what was encoded", () => {
    const h = newHistogram();
    for (const v of [100, 2000, 30_000]) h.recordValue(v);
    const back = decodeHistogram(encodeHistogram(h), "a.json");
    expect(back.totalCount).toBe(3);
    for (const p of [50, 99, 100]) expect(back.getValueAtPercentile(p)).toBe(h.getValueAtPercentile(p));
  });

  it.each([
    ["not base64", "@@@"],
    ["not a histogram", Buffer.from("hello, this is no histogram").toString("base64")],
    ["a number", 42],
  ])("refuses %s with a usage error", (_, value) => {
    expect(() => decodeHistogram(value, "a.json: histograms.latency")).toThrow(
      /^a\.json: histograms\.latency: not an encoded histogram/,
    );
  });

  it("refuses a header that would make the decoder allocate a vast counts array, before decoding it", () => {
    // A V2 header claiming 5 significant digits up to 2^62: hundreds of MiB of counts if it were believed.
    const header = Buffer.alloc(40);
    header.writeUInt32BE(0x1c849313, 0);
    header.writeInt32BE(5, 12);
    header.writeBigInt64BE(1n, 16);
    header.writeBigInt64BE(2n ** 62n, 24);
    const packed = Buffer.concat([Buffer.from([0x1c, 0x84, 0x93, 0x14, 0, 0, 0, 0]), deflateSync(header)]);
    expect(() => decodeHistogram(packed.toString("base64"), "b.json")).toThrow(
      /outside what a load run records \(5 significant digits/,
    );
  });
});
