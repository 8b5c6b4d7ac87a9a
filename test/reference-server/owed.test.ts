// The ledger of reply bytes owed to clients that do not read: per connection, in all, and who may get new work.
import { describe, expect, it } from "vitest";
import { createOwedLedger } from "../../reference-server/owed.js";

describe("createOwedLedger", () => {
  it("counts what each account owes and the total, and forgets a closed account's debt", () => {
    const ledger = createOwedLedger({ perConnectionBytes: 100, totalBytes: 1000 });
    const a = ledger.open();
    const b = ledger.open();
    a.owe(60);
    b.owe(30);
    a.paid(20);
    expect([a.owed(), b.owed(), ledger.total()]).toEqual([40, 30, 70]);
    a.paid(500); // never below zero, never taken from another account
    expect([a.owed(), ledger.total()]).toEqual([0, 30]);
    b.close();
    b.close();
    b.owe(10);
    expect([b.owed(), ledger.total()]).toEqual([0, 0]);
  });

  it("refuses a connection past its share, and past the budget only connections that owe something", () => {
    const ledger = createOwedLedger({ perConnectionBytes: 100, totalBytes: 150 });
    const slow = ledger.open();
    const other = ledger.open();
    const fresh = ledger.open();
    slow.owe(100);
    expect(ledger.refuse(slow)).toMatch(/this connection holds 100 bytes for replies it has not read/);
    expect(ledger.refuse(other)).toBeUndefined();
    other.owe(50);
    expect(ledger.refuse(other)).toMatch(/the server holds 150 bytes/);
    expect(ledger.refuse(fresh)).toBeUndefined();
    expect(ledger.refuse(undefined)).toBeUndefined();
    slow.paid(100);
    expect(ledger.refuse(slow)).toBeUndefined();
    expect(ledger.refuse(other)).toBeUndefined();
  });

  it("refuses limits that are not positive integers", () => {
    expect(() => createOwedLedger({ stallMs: 0 })).toThrow(/stallMs must be a positive integer/);
  });
});
