// docs/reliability.md is written whole from test/reference-server/reliability-results.json (`npm run soak` records
// it, then runs scripts/reliability-page.js): what each test does, in words, and each figure from the run that
// measured it, or that none did. test/docs-generated.test.ts holds the page to the file.
import type { Measured, ReliabilityResults } from "./reliability-results.js";

/** One part of the page: what is tested, where, and the figures of the results file's entries that measured it. */
interface Section {
  title: string;
  method: string;
  measured: Array<{ key: string; says: (f: Record<string, number>) => string }>;
}

/** The flow-control attack's figures: connections sending large calls with their windows shut, never opened. */
const windowsShut = (f: Record<string, number>, how: string) =>
  `${f.connections} connections sending calls with windows shut for ${f.attackS} s, ${how}: ${f.calls} calls, ` +
  `${f.reset} reset, ${f.refused} refused, ${f.neverSentWhole} never sent whole, ${f.sentAway} ended with their ` +
  `connection; RSS ${f.rssBeforeMiB} MiB before, ${f.rssMaxMiB} MiB at most; bystanders in ${f.bystanderRounds} ` +
  `rounds, the slowest Hello ${f.slowestHelloMs} ms.`;

/** The unread-replies attack's figures: connections from two addresses that each GET a 5 MiB XML reply, never read. */
const unreadReplies = (f: Record<string, number>) =>
  `${f.connections} connections from ${f.addresses} addresses: RSS ${f.rssBeforeMiB} MiB before, ${f.rssMaxMiB} ` +
  `MiB at most (the process grew by ${f.rssGrowthMiB} MiB; heap and external ${f.countedGrowthMiB} MiB; the ` +
  `test's bound ${f.boundMiB} MiB); ${f.answered} attackers answered 200, ${f.stillHeld} connections still held ` +
  `after ${f.watchedMs} ms; ${f.bystandersServed} bystanders served meanwhile; every address served again ` +
  `${f.servedAgainMs} ms after the attackers left; ${f.cpuSeconds} CPU-seconds (server and clients).`;

const SECTIONS: Section[] = [
  {
    title: "Hostile targets",
    method:
      "`test/harness/hostile-targets.test.ts` runs the harness against targets that refuse the connection, " +
      "accept it and stay silent, speak HTTP/1.1 only, send garbage, send GOAWAY or RST_STREAM mid-call, " +
      "announce a huge message, trickle bytes forever, drop the connection after the headers, or speak TLS where " +
      "plaintext was asked and the reverse. Each run ends by itself with a verdict or exit 3, with the cause in " +
      "words and no stack trace, and leaves no connection open; a target that never completes the HTTP/2 " +
      "handshake is found before any check runs.",
    measured: [],
  },
  {
    title: "Targets that try to exhaust the harness",
    method:
      "Every decompression of target data is streamed through zlib in slices off the event loop and stopped past " +
      "its bound; an OpenAPI document is read in one pass; a JSON or XML body nested too deep is found by one " +
      "linear scan and not parsed, nor is an XML body past its bound; each response is parsed once, and a " +
      "failing check prints its first problems and counts the rest. `test/harness/hostile-bombs.test.ts` " +
      "measures each run's peak RSS (VmHWM) against replies that inflate enormously over gRPC, Connect and HTTP, " +
      "JSON and XML nested deep, and a huge OpenAPI document.",
    measured: [],
  },
  {
    title: "gRPC fuzzing",
    method:
      "`test/reference-server/fuzz-grpc.test.ts` sends generated and mutated requests over raw HTTP/2 (paths, " +
      "methods, content-types, encodings, timeouts, frames whose length prefix lies, truncated and corrupted " +
      "messages; `FUZZ_RUNS` of them in the soak): every one is answered with a status and the server keeps " +
      "serving.",
    measured: [],
  },
  {
    title: "HTTP fuzzing",
    method:
      "`test/reference-server/fuzz-http.test.ts` sends requests with random paths, methods, headers and bodies " +
      "(deep JSON and XML, large bodies, invalid UTF-8, entity expansion, external entities, `__proto__` keys): " +
      "no 5xx, the stored messages unchanged by what is refused, and nothing reaches `Object.prototype`.",
    measured: [],
  },
  {
    title: "Floods and shutdown under load",
    method:
      "`test/reference-server/resilience.test.ts`: rounds of concurrent calls over many connections, every reply " +
      "right and the heap flat from round to round; pings without calls too often get GOAWAY ENHANCE_YOUR_CALM; " +
      "idle connections are closed; a request whose headers or body trickle in gets 408 within the request " +
      "bound; SIGTERM with calls starting around it finishes every accepted call with its own reply and refuses " +
      "the rest UNAVAILABLE, none dropped, exit 0.",
    measured: [],
  },
  {
    title: "Compression bombs and smuggling",
    method:
      "`test/reference-server/held-guarantees.test.ts`: gzipped bombs on each protocol are refused by their " +
      "inflated size (gRPC and gRPC-Web grpc-status 8, Connect `resource_exhausted`; the resources never inflate " +
      "a body), the process growing by far less than they inflate to; with the receive limit lifted the RPC " +
      "tests fail. A request that could be framed two ways (Content-Length beside Transfer-Encoding, two " +
      "Content-Lengths, an obfuscated Transfer-Encoding) gets one 400 and its connection closed, and the request " +
      "hidden in its body no answer.",
    measured: [],
  },
  {
    title: "Secrets",
    method:
      "The API key is compared over fixed-length digests in constant time, never logged, and a 401 says nothing " +
      "about valid keys (`test/reference-server/http.test.ts`).",
    measured: [],
  },
  {
    title: "The data directory",
    method:
      "`test/reference-server/data-dir*.test.ts`, serve in its own process, as root where namespaces, other " +
      "users and mounts need it: two serve processes on one directory, each process 1 of its own PID namespace " +
      "(the second refuses, exit 75; every acknowledged write survives SIGKILL of both); a killed holder's lease " +
      "taken over once it lapses, the wait said on stderr, and racing restarts of which one serves; a frozen " +
      "holder that wakes after another took the directory exits 75 without acknowledging a write; a damaged " +
      "`pg_control` or `pgdata` exits 65 and a directory `nobody` may not use 77, each with one line and the " +
      "directory left as it was; a full disk answers 507 with reads still served, and every acknowledged write " +
      "is listed after the disk grows.",
    measured: [],
  },
  {
    title: "Resets",
    method:
      "`test/reference-server/attacks.test.ts`, serve in its own process and bystanders from 127.0.0.2: HEADERS " +
      "without END_STREAM then RST_STREAM with several codes, on Hello, health and an unknown path, and a Rapid " +
      "Reset of many streams in one burst on one connection: that stream or connection ends, the process serves " +
      "on, on both ports, bystanders answered within a second.",
    measured: [],
  },
  {
    title: "Huge headers",
    method:
      "Header blocks past the limit are refused with RESOURCE_EXHAUSTED before grpc-js sees them, even before " +
      "the client has acknowledged the limit in SETTINGS (node:http2 enforces only an acknowledged one); " +
      "`attacks.test.ts` sends them raw on many streams at once and `attack-tools.test.ts` with Debian's h2load " +
      "(its figures not recorded yet).",
    measured: [
      {
        key: "large-headers",
        says: (f) =>
          `${f.connections} connections x ${f.streamsEach} streams of ${f.headerKB} KB header blocks, sent raw: ` +
          `RSS ${f.rssBeforeMiB} MiB before, ${f.rssDuringMiB} MiB under the attack, ${f.rssAfterMiB} MiB after.`,
      },
    ],
  },
  {
    title: "Connections and calls in flight",
    method:
      "Past the per-address cap new connections close at once on both ports, and another address is served; " +
      "under a low open-file limit an HTTP slowloris does not starve the gRPC port; past the cap on calls in " +
      "flight the rest are refused with RESOURCE_EXHAUSTED at once, and served again once the held ones end. " +
      "Each limit is also tested by its flag (`--max-header-bytes`, `--max-streams`, `--memory-watermark-mib`, " +
      "`--max-in-flight`, `--max-connections`).",
    measured: [],
  },
  {
    title: "Flow-control windows held shut",
    method:
      "`test/reference-server/flow-control.test.ts`: on the gRPC port, what a connection leaves unread is " +
      "counted against `--unread-mib-per-connection`, `--unread-mib` and `--unread-timeout`. A connection past " +
      "its share, or owing anything while the process is past its budget, gets RESOURCE_EXHAUSTED with a " +
      "pushback for each new call; a reply to a call admitted before that is not queued but its stream reset " +
      "ENHANCE_YOUR_CALM, as is a stream whose reply has made no progress for `--unread-timeout`; a slow reader " +
      "that takes some of its reply is not reset; only a connection whose every stream stalled is sent away. The " +
      "test holds RSS under the watermark and a margin, and every bystander served during the attack and after " +
      "it.",
    measured: [
      { key: "windows-shut-8s", says: (f) => windowsShut(f, "with a short `--unread-timeout`") },
      {
        key: "windows-shut-10s",
        says: (f) => windowsShut(f, "with `--unread-timeout` too long for any stream to stall: the budget alone"),
      },
    ],
  },
  {
    title: "Half-sent requests",
    method:
      "`test/reference-server/half-sent.test.ts`: grpc-js keeps a request's bytes until the message is whole and " +
      "the call ended, so the gRPC port counts them as they come: a request that would take its connection past " +
      "its share is refused by a reset, past `--unread-mib` no request grows, and a call whose request stalls " +
      "for `--unread-timeout` is reset; a connection whose streams all stalled gets GOAWAY and is closed. A " +
      "request that trickles in, a byte every little under `--unread-timeout`, is reset once `--request-timeout` " +
      "has passed since it began, and an HTTP/1.1 body likewise gets 408 (tested with a trickling client on each " +
      "port, a bystander served meanwhile); a unary request whole in its first DATA frame but never ended holds " +
      "its call until `--unread-timeout` (`--max-in-flight` bounds how many).",
    measured: [
      {
        key: "half-sent",
        says: (f) =>
          `${f.connections} connections with windows shut, ${f.streams} Hello streams each of a 1 MiB request ` +
          `sent all but its last 64 bytes: at most ${f.heldMax} held per connection; RSS ${f.rssBeforeMiB} MiB ` +
          `before, ${f.rssMaxMiB} MiB at most (the watermark, on heap and external memory, ${f.watermarkMiB} ` +
          `MiB; the test allows RSS 128 MiB past it); bystanders in ${f.bystanderRounds} rounds, the slowest ` +
          `Hello ${f.slowestHelloMs} ms; everyone served again ${f.servedAgainMs} ms after the attacker left.`,
      },
      {
        key: "whole-requests-unread",
        says: (f) =>
          `${f.connections} connections with windows shut, ${f.streams} whole 1 MiB requests each, replies never ` +
          `read: at most ${f.heldMax} held per connection, at least ${f.resetMin} reset; RSS ${f.rssBeforeMiB} ` +
          `MiB before, ${f.rssMaxMiB} MiB at most (the watermark, on heap and external memory, ${f.watermarkMiB} ` +
          `MiB; the test allows RSS 128 MiB past it); bystanders in ${f.bystanderRounds} rounds, the slowest ` +
          `Hello ${f.slowestHelloMs} ms; everyone served again ${f.servedAgainMs} ms after the attacker left.`,
      },
    ],
  },
  {
    title: "Stored data and shutdown",
    method:
      "Large POSTs fill a bounded store, then get 507; a body past the limit gets 413; `--store-max-messages` " +
      "refuses creates until a delete makes room; the collection is paged. SIGTERM with a gRPC stream and an " +
      "HTTP body held open exits 0 within the grace, every session and connection destroyed.",
    measured: [],
  },
  {
    title: "Floods from h2load and wrk",
    method:
      "`test/reference-server/attack-tools.test.ts` (longer in `npm run soak`): h2load with many connections and " +
      'streams, and wrk on `GET /messages`; the server stays up and serves everyone after. Not met: "other ' +
      "clients answered within a second during a flood\". While a flood saturates a core, a bystander's new " +
      "connection can wait for the server's first SETTINGS or response, and the kernel's count of listen queue " +
      "overflows rises (Node listens with a bounded backlog); a plain node:http2 server with no guard shows the " +
      "same stall, so the caps bound memory and descriptors but not this latency. `npm test` asserts the short " +
      "floods leave no bystander unanswered within 10 s.",
    measured: [],
  },
  {
    title: "Slow readers, deep pipelines, XML amplification",
    method:
      "`test/reference-server/slow-readers.test.ts`, serve in its own process, raw sockets that never read, " +
      "attacker and bystanders (Hello and `GET /` from 127.0.0.2) in the test process on the same cores. The " +
      "HTTP port serves a connection's pipelined requests one at a time, stops reading a connection while " +
      "requests wait, closes one whose reply stays unread for `--unread-timeout` or that has too many requests " +
      "waiting, counts the reply bytes it queues on the owed ledger, and writes a reply as its client takes it, " +
      "a piece at a time.",
    measured: [
      {
        key: "slow-readers",
        says: (f) =>
          `${f.connections} connections pipelining listings of large messages (JSON and XML), never read: RSS ` +
          `${f.rssBeforeMiB} MiB before, ${f.rssMaxMiB} MiB at most; ${f.closed} closed by the server within ` +
          `${f.closedMs} ms; bystanders in ${f.bystanderRounds} rounds, the slowest Hello ${f.slowestHelloMs} ms ` +
          `and \`GET /\` ${f.slowestGetMs} ms; everyone served again ${f.servedAgainMs} ms after the attack ` +
          `stopped.`,
      },
      {
        key: "deep-pipelines",
        says: (f) =>
          `${f.connections} connections pipelining ${f.requestsEach} requests each: ${f.stillHeld} still held ` +
          `after ${f.closedMs} ms; RSS ${f.rssBeforeMiB} MiB before, ${f.rssMaxMiB} MiB at most; bystanders in ` +
          `${f.bystanderRounds} rounds, the slowest Hello ${f.slowestHelloMs} ms and \`GET /\` ${f.slowestGetMs} ` +
          `ms.`,
      },
      {
        key: "xml-amplification",
        says: (f) =>
          `${f.listings} XML listings in a row of bodies made of \`&\`: pages of ${f.largestPageMiB} MiB at ` +
          `most; RSS ${f.rssBeforeMiB} MiB before, ${f.rssMaxMiB} MiB at most; bystanders in ` +
          `${f.bystanderRounds} rounds, the slowest Hello ${f.slowestHelloMs} ms and \`GET /\` ${f.slowestGetMs} ` +
          `ms; everyone served again ${f.servedAgainMs} ms after.`,
      },
    ],
  },
  {
    title: "Replies left unread",
    method:
      "`test/reference-server/unread-replies.test.ts`, the server in the test process with a short stall bound: " +
      "connections from 127.0.0.1 and 127.0.0.2 (half each) each GET, in XML, a message whose large body is all " +
      "`&`, its reply or the page that holds it, and never read; bystanders from 127.0.0.3 meanwhile; once the " +
      "attackers leave, every address asked again until served, and the whole reply read after, byte for byte. " +
      "`npm test` runs it with 64 connections (about four CPU-seconds), `npm run soak` with 256. What they cost " +
      "is CPU and the kernel's memory, not the process's: the kernel takes megabytes of each reply into the " +
      "sockets' buffers before the client's window stops it, so the server encodes most of every reply, all " +
      "replies together at most 4 Mi UTF-16 units of it per turn of the event loop, so that other clients' " +
      "requests are read between them. Not met: the issue's 512 connections. In the one run measured (its " +
      "figures are in the test's comment) the process held its bounds and served every address at once after the " +
      "attackers left, but a few bystanders got no answer within 15 s during it: 512 connections' socket buffers " +
      "pass the kernel's TCP memory limit (`net.ipv4.tcp_mem`), past which it drops packets on every connection; " +
      "Node cannot shrink a socket's send buffer, so lowering `net.ipv4.tcp_wmem`'s maximum is the operator's " +
      "remedy.",
    measured: [{ key: "unread-replies-256", says: unreadReplies }],
  },
];

/** Where and when an entry was measured. */
const ranOn = (m: Measured) =>
  `(${m.date.slice(0, 10)}, Node ${m.node}, ${m.machine}, load average ${m.loadAverage} at the end)`;

/** The whole of docs/reliability.md for a results file. */
export function reliabilityPage(results: ReliabilityResults): string {
  const lines = [
    "# Reliability",
    "",
    "<!-- Written by scripts/reliability-page.js from test/reference-server/reliability-results.json; do not edit. -->",
    "",
    "`npm test` runs bounded versions of these tests and `npm run soak` the long ones; the soak records what the tests",
    "measure in `test/reference-server/reliability-results.json` and writes this page from it. A figure no run has",
    "recorded there is said to be not measured: the tests still hold their bounds in every `npm test`.",
  ];
  for (const section of SECTIONS) {
    lines.push("", `## ${section.title}`, "", section.method, "");
    if (section.measured.length === 0)
      lines.push(
        "Figures: not measured in this results file (the tests hold their bounds but do not record what they see yet).",
      );
    for (const { key, says } of section.measured) {
      const m = results.measured[key];
      lines.push(
        m === undefined ? `- \`${key}\`: not measured in this results file.` : `- ${says(m.figures)} ${ranOn(m)}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}
