// Fresh connections opened ahead: at most the bound at once, each taken by one call, first opened first taken; what is
// not taken is closed when the asking is given back; one that failed is closed, not handed out, and not opened again.
import { describe, expect, it } from "vitest";
import { AheadPool } from "../../../../harness/protocols/grpc/ahead-pool.js";

interface Fake {
  id: number;
  failed: boolean;
  closed: boolean;
}

function pool() {
  const opened: Fake[] = [];
  const ahead = new AheadPool<Fake>({
    open: () => {
      const c = { id: opened.length, failed: false, closed: false };
      opened.push(c);
      return c;
    },
    usable: (c) => !c.failed,
    close: (c) => (c.closed = true),
  });
  return { ahead, opened };
}

describe("AheadPool", () => {
  it("opens what is asked for within the bound, and one more as each is taken, until the asking is used up", () => {
    const { ahead, opened } = pool();
    ahead.ask(5, 2);
    expect(opened.map((c) => c.id)).toEqual([0, 1]);
    const taken = [ahead.take(), ahead.take(), ahead.take()];
    expect(taken.map((c) => c?.id)).toEqual([0, 1, 2]);
    // Two left to take, two open ahead: none more.
    expect(opened.length).toBe(5);
    expect([ahead.take()?.id, ahead.take()?.id]).toEqual([3, 4]);
    expect(ahead.take()).toBeUndefined();
    expect(opened.length).toBe(5);
    expect(opened.every((c) => !c.closed)).toBe(true);
  });

  it("hands each connection to one call only", () => {
    const { ahead } = pool();
    ahead.ask(8, 8);
    const ids = Array.from({ length: 8 }, () => ahead.take()?.id);
    expect(new Set(ids).size).toBe(8);
    expect(ahead.take()).toBeUndefined();
  });

  it("closes what was not taken when the asking is given back, and keeps another asking's share", () => {
    const { ahead, opened } = pool();
    const one = ahead.ask(3, 3);
    const two = ahead.ask(1, 3);
    expect(opened.length).toBe(3);
    one();
    expect(ahead.size).toBe(1);
    expect(opened.filter((c) => c.closed).map((c) => c.id)).toEqual([1, 2]);
    two();
    expect(ahead.size).toBe(0);
    expect(opened.every((c) => c.closed)).toBe(true);
    // Given back twice: nothing more happens.
    one();
    expect(opened.length).toBe(3);
  });

  it("skips and closes a connection that failed, and opens none in its place", () => {
    const { ahead, opened } = pool();
    ahead.ask(4, 2);
    opened[0]!.failed = true;
    expect(ahead.take()?.id).toBe(1);
    expect(opened[0]!.closed).toBe(true);
    // Three left to take, two ahead again: the failed one counted for no call.
    expect(opened.length).toBe(4);
    opened.forEach((c) => (c.failed = true));
    expect(ahead.take()).toBeUndefined();
    expect(ahead.size).toBe(0);
    expect(opened.length).toBe(4);
  });

  it("opens nothing for an asking of none, and closes everything when the pool closes", () => {
    const { ahead, opened } = pool();
    ahead.ask(0, 8);
    ahead.ask(3, 0);
    expect(opened.length).toBe(0);
    ahead.ask(3, 8);
    ahead.close();
    expect(opened.map((c) => c.closed)).toEqual([true, true, true]);
    expect(ahead.take()).toBeUndefined();
  });
});
