// The watermark where V8's gc cannot be had: a runtime whose V8 flags are frozen after start-up refuses
// `--expose-gc` with a throw. The sampler reads memory as it is then, and the process neither fails nor stops shedding.
import { afterAll, describe, expect, it, vi } from "vitest";

vi.mock("node:v8", async (importOriginal) => {
  const v8 = await importOriginal<typeof import("node:v8")>();
  return {
    ...v8,
    setFlagsFromString: vi.fn((flags: string) => {
      throw new Error(`flags are frozen: ${flags}`);
    }),
  };
});

// Test files share their worker's modules: the sampler is loaded afresh here, so that it sees the mock above.
vi.resetModules();
const { createShedder } = await import("../../reference-server/protection.js");
const { setFlagsFromString } = await import("node:v8");
// The next file in this worker imports the real node:v8, and a sampler bound to it.
afterAll(() => {
  vi.doUnmock("node:v8");
  vi.resetModules();
});

describe("the memory watermark without V8's gc", () => {
  it("sheds past its watermark and admits below it, reading memory as it is, when --expose-gc is refused", async () => {
    expect(
      (globalThis as { gc?: unknown }).gc,
      "this test needs a process started without --expose-gc",
    ).toBeUndefined();
    const low = createShedder({ maxInFlight: 10, memoryWatermarkBytes: 1 });
    const high = createShedder({ maxInFlight: 10, memoryWatermarkBytes: Number.MAX_SAFE_INTEGER });
    try {
      expect(low.admit()).toBe("the server is short of memory");
      expect(high.admit()).toBeUndefined();
      // The sampler runs every 100 ms and would collect past the watermark: a few samples, none failing.
      await new Promise((r) => setTimeout(r, 350));
      expect(low.admit()).toBe("the server is short of memory");
      expect(high.admit()).toBeUndefined();
      // The refusal was met, not avoided: the sampler asked for the flag.
      expect(vi.mocked(setFlagsFromString)).toHaveBeenCalled();
    } finally {
      low.stop();
      high.stop();
    }
  });
});
