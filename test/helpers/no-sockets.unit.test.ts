// The unit project's guard (test/helpers/no-sockets.ts, its setup file): a unit test that opens a socket or starts
// a process throws, naming the call, whichever way the module was imported.
import { spawn } from "node:child_process";
import * as child_process from "node:child_process";
import http from "node:http";
import net from "node:net";
import { describe, expect, it } from "vitest";

const REFUSED = /a unit test called .*: unit tests open no socket and start no process/;

describe("the unit project", () => {
  it("refuses a server, a client connection and a child process", () => {
    expect(() => http.createServer().listen(0, "127.0.0.1")).toThrow(/net\.Server\.listen/);
    expect(() => net.connect({ host: "127.0.0.1", port: 9 })).toThrow(REFUSED);
    expect(() => new net.Socket().connect({ host: "127.0.0.1", port: 9 })).toThrow(REFUSED);
    expect(() => spawn("true")).toThrow(/child_process\.spawn/);
    expect(() => child_process.execFileSync("true")).toThrow(REFUSED);
  });

  it("refuses fetch, which connects through net", async () => {
    const failure: unknown = await fetch("http://127.0.0.1:65000/").catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).cause)).toMatch(REFUSED);
  });
});
