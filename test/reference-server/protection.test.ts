// Admission past the limits, as data: calls in flight and the memory watermark, with one memory reading shared by
// every shedder of the process.
import { describe, expect, it, vi } from "vitest";
import { createShedder, defaultLimits } from "../../reference-server/protection.js";

describe("createShedder", () => {
  it("admits up to maxInFlight, refuses past it, and admits again once one is done", () => {
    const shedder = createShedder({ maxInFlight: 2, memoryWatermarkBytes: Number.MAX_SAFE_INTEGER });
    try {
      expect([shedder.admit(), shedder.admit()]).toEqual([undefined, undefined]);
      expect(shedder.admit()).toMatch(/limit of 2 calls in flight/);
      shedder.done();
      expect(shedder.admit()).toBeUndefined();
    } finally {
      shedder.stop();
    }
  });

  it("refuses everything while memory is past its watermark, beside a shedder that is not", () => {
    const low = createShedder({ maxInFlight: 10, memoryWatermarkBytes: 1 });
    const high = createShedder({ maxInFlight: 10, memoryWatermarkBytes: Number.MAX_SAFE_INTEGER });
    try {
      expect(low.admit()).toBe("the server is short of memory");
      expect(high.admit()).toBeUndefined();
    } finally {
      low.stop();
      low.stop();
      high.stop();
    }
  });

  it("reads memory from V8's heap statistics, not process.memoryUsage, which reads the RSS from /proc as well", () => {
    const memoryUsage = vi.spyOn(process, "memoryUsage");
    const shedder = createShedder({ maxInFlight: 10, memoryWatermarkBytes: 1 });
    try {
      // The reading is taken when the first shedder opens: it already sees the process past a watermark of 1 byte.
      expect(shedder.admit()).toBe("the server is short of memory");
      expect(memoryUsage).not.toHaveBeenCalled();
    } finally {
      shedder.stop();
      memoryUsage.mockRestore();
    }
  });

  it(
    "is not kept refusing by garbage: past its watermark memory is read after a collection, so once the bytes are " +
      "let go it admits again within 5 s",
    async () => {
      const MIB = 1024 * 1024;
      let live: Buffer[] = Array.from({ length: 8 }, () => Buffer.alloc(16 * MIB, 1));
      const now = process.memoryUsage();
      const shedder = createShedder({ maxInFlight: 10, memoryWatermarkBytes: now.heapUsed + now.external - 64 * MIB });
      try {
        expect(shedder.admit()).toBe("the server is short of memory");
        // Nothing allocates from here on but the polling: nothing would make V8 collect.
        live = [];
        const letGo = performance.now();
        let refused: string | undefined = "not asked";
        while (refused !== undefined && performance.now() - letGo < 5000) {
          refused = shedder.admit();
          if (refused !== undefined) await new Promise((r) => setTimeout(r, 50));
        }
        expect(
          refused,
          `still refusing ${Math.round(performance.now() - letGo)} ms after the memory was let go (${live.length} ` +
            `buffers)`,
        ).toBeUndefined();
      } finally {
        shedder.stop();
      }
    },
  );
});

describe("defaultLimits", () => {
  it("gives each interface at most half of what the open-file limit leaves", () => {
    expect(defaultLimits(256).maxConnections).toBe(96);
    expect(defaultLimits(20_000).maxConnections).toBe(1000);
    expect(defaultLimits(256).maxConnectionsPerAddress).toBeLessThanOrEqual(96);
  });
});
