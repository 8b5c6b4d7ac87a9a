// HTTP/1.1 connections served one request at a time, with the reply bytes each owes counted on the ledger, so that a
// client that pipelines requests and never reads their replies holds one reply in the process, not one per request.
//
// Node parses every request in a chunk it reads (up to 64 KiB: a thousand or more pipelined GETs) and emits them
// all at once; it pauses the socket only afterwards, and only while replies are already queued. Behind this gate a
// request is handed to fastify only when the previous reply on its connection has been handed to the kernel (its
// response's 'finish'); the rest wait, and while any waits the connection is not read. A connection whose reply
// stays unread, none of it taken, for `stallMs` is closed, and so is one with more than MAX_WAITING requests waiting:
// each costs about 1 KiB of heap before it is served (3.4 MiB for a chunk of 3,000 GET / measured on node 20), and
// a client that pipelines should retry what a closed connection left unanswered (RFC 9112 §9.3.2).
//
// Reading is paused through node's own flag (`socket._paused`, lib/_http_server.js), the one its pipelining logic
// uses: node resumes a socket it paused when the socket drains, and re-pauses one that something else resumes
// (a request being read) while the flag is set. So node and this gate never fight: when node's drain listener
// resumes a connection whose requests still wait, the gate's own, run after it in the same tick, sets the flag
// again before node's deferred resume takes effect.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { OwedAccount, OwedLedger } from "../owed.js";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** The parts of node's HTTP server socket (lib/_http_server.js, node 20) the gate reads and sets. */
interface HttpSocket extends Socket {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
  /** Bytes libuv has yet to hand to the kernel: it falls as a large write is taken piece by piece. */
  _handle?: { writeQueueSize?: number } | null;
}

interface Connection {
  gate: Gate;
  socket: HttpSocket;
  account: OwedAccount;
  /** A request handed on whose reply the kernel has not yet taken whole. */
  busy: boolean;
  waiting: Array<[IncomingMessage, ServerResponse]>;
  /** Bytes counted on the account: the socket's writableLength when last looked at. */
  owed: number;
  watchdog: NodeJS.Timeout | undefined;
  /** The socket drained since the watchdog last looked: the client took everything queued. */
  drained: boolean;
}

/** Requests one connection may have waiting behind the one being served; one more and the connection is closed. */
export const MAX_WAITING = 128;

export interface ConnectionGateOptions {
  ledger: OwedLedger;
  /**
   * A connection closed because its reply went unread for the ledger's stallMs, or because too many requests waited.
   */
  onClose?: (why: string) => void;
}

export interface ConnectionGate {
  /** fastify's request handler, behind the gate. */
  handler: Handler;
}

/** What every connection behind one gate shares. */
interface Gate {
  next: Handler;
  options: ConnectionGateOptions;
  connections: WeakMap<Socket, Connection>;
  stallMs: number;
  /** How often a connection that owes is looked at: a stalled one is closed within a quarter of the bound past it. */
  checkMs: number;
}

export function createConnectionGate(next: Handler, options: ConnectionGateOptions): ConnectionGate {
  const stallMs = options.ledger.limits.stallMs;
  const gate: Gate = {
    next,
    options,
    connections: new WeakMap(),
    stallMs,
    checkMs: Math.max(50, Math.min(1000, Math.floor(stallMs / 4))),
  };
  return {
    handler(request, response) {
      const socket = request.socket as HttpSocket;
      const c = gate.connections.get(socket) ?? open(gate, socket);
      if (socket.destroyed) return;
      if (!c.busy) return dispatch(c, request, response);
      if (c.waiting.length >= MAX_WAITING) {
        options.onClose?.(`more than ${MAX_WAITING} requests pipelined behind an unfinished reply`);
        socket.destroy();
        return;
      }
      c.waiting.push([request, response]);
      pause(c);
    },
  };
}

function open(gate: Gate, socket: HttpSocket): Connection {
  const c: Connection = {
    gate,
    socket,
    account: gate.options.ledger.open(),
    busy: false,
    waiting: [],
    owed: 0,
    watchdog: undefined,
    drained: false,
  };
  gate.connections.set(socket, c);
  socket.on("drain", () => {
    c.drained = true;
    count(c);
    // Node's own drain listener, registered before this one, resumes a socket it paused; requests still wait here.
    if (c.waiting.length > 0) pause(c);
  });
  socket.once("close", () => {
    stopWatching(c);
    c.owed = 0;
    c.account.close();
    // Node aborts the requests it parsed; those never handed on are dropped with it.
    c.waiting.length = 0;
  });
  return c;
}

function dispatch(c: Connection, request: IncomingMessage, response: ServerResponse): void {
  c.busy = true;
  // A large reply is streamed as the client takes it (routes.ts): it owes bytes from its first piece on, long before
  // it is written whole, and one whose client stops reading is never written whole. So it is watched from here
  // until 'finish', when the kernel has taken all of it.
  watch(c);
  response.once("prefinish", () => count(c));
  response.once("finish", () => {
    stopWatching(c);
    count(c);
    // The next request on the next turn of the event loop, not in this one: a reply the kernel takes at once
    // finishes within the same turn, so a pipeline would otherwise be served to its end (or until the kernel's
    // buffers fill) before any other client's request was even read.
    setImmediate(() => {
      c.busy = false;
      if (c.socket.destroyed) return;
      const following = c.waiting.shift();
      if (following !== undefined) dispatch(c, ...following);
      if (c.waiting.length === 0) resume(c);
    });
  });
  c.gate.next(request, response);
}

/** Brings the account to what the socket holds now. */
function count(c: Connection): void {
  const now = c.socket.destroyed ? 0 : c.socket.writableLength;
  if (now > c.owed) c.account.owe(now - c.owed);
  else c.account.paid(c.owed - now);
  c.owed = now;
}

/**
 * Closes the connection when its reply owes bytes and makes no progress for stallMs: nothing queued was taken
 * (neither JS's queue nor libuv's shrank, and the socket did not drain). A reply with nothing queued is not stalled:
 * it is being made, or waits for the store.
 */
function watch(c: Connection): void {
  if (c.watchdog !== undefined) return;
  const { stallMs, checkMs, options } = c.gate;
  let queued = c.socket.writableLength;
  let inLibuv = c.socket._handle?.writeQueueSize ?? 0;
  let progressAt = performance.now();
  c.drained = false;
  c.watchdog = setInterval(() => {
    count(c);
    const nowQueued = c.socket.writableLength;
    const nowInLibuv = c.socket._handle?.writeQueueSize ?? 0;
    if (nowQueued === 0 || nowQueued < queued || nowInLibuv < inLibuv || c.drained) progressAt = performance.now();
    queued = nowQueued;
    inLibuv = nowInLibuv;
    c.drained = false;
    if (performance.now() - progressAt >= stallMs) {
      stopWatching(c);
      options.onClose?.(`${nowQueued} bytes of replies unread for ${stallMs} ms`);
      c.socket.destroy();
    }
  }, checkMs);
  c.watchdog.unref();
}

function stopWatching(c: Connection): void {
  clearInterval(c.watchdog);
  c.watchdog = undefined;
}

/**
 * Stops reading the connection, as node does when replies queue: with its flag set, node pauses the parser after
 * the chunk it is parsing and re-pauses the socket whenever reading a request would resume it.
 */
function pause(c: Connection): void {
  const socket = c.socket;
  if (socket._paused === true || socket.destroyed) return;
  socket._paused = true;
  socket.pause();
}

/** Reads the connection again, as node's drain listener does; left to that listener while the socket must drain. */
function resume(c: Connection): void {
  const socket = c.socket;
  if (socket._paused !== true || socket.destroyed || socket.writableNeedDrain) return;
  socket._paused = false;
  socket.parser?.resume();
  socket.resume();
}
