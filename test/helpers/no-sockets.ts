// The unit project's setup file (vitest.config.ts): a unit test opens no socket and starts no process, so every way
// to do either throws, naming what was called. A test that needs a server or a child belongs to integration.
import child_process from "node:child_process";
import dgram from "node:dgram";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import tls from "node:tls";

/** The error every refused call throws: a test that meets it is an integration test, not a unit test. */
export class UnitTestOpenedSocket extends Error {}

const refuse = (what: string) =>
  function refused(): never {
    throw new UnitTestOpenedSocket(
      `a unit test called ${what}: unit tests open no socket and start no process (move it to the integration ` +
        `project, vitest.config.ts)`,
    );
  };

const CHILD_PROCESS = ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"] as const;

for (const name of CHILD_PROCESS) Object.assign(child_process, { [name]: refuse(`child_process.${name}`) });
// Every client socket (net, tls, http, http2, fetch's undici) connects through net.Socket; every server listens
// through net.Server (http, https, http2 and tls servers are net.Servers).
net.Socket.prototype.connect = refuse("net.Socket.connect") as typeof net.Socket.prototype.connect;
net.Server.prototype.listen = refuse("net.Server.listen") as typeof net.Server.prototype.listen;
Object.assign(net, { connect: refuse("net.connect"), createConnection: refuse("net.createConnection") });
Object.assign(tls, { connect: refuse("tls.connect") });
Object.assign(dgram, { createSocket: refuse("dgram.createSocket") });
// ESM imports of these modules (import { spawn } from "node:child_process") see the refusals too.
syncBuiltinESMExports();
