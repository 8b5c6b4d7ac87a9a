// `serve` on an embedded data directory, in a process of its own and optionally inside a wrapper (a PID
// namespace as a container has, another user): for the data directory's tests, which kill, stop and restart it.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../contract/paths.js";

export interface DataDirServe {
  child: ChildProcess;
  /** The ports once both are printed, or undefined when serve ended first. */
  listening: Promise<{ grpcPort: number; httpPort: number } | undefined>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** The pid of node itself: inside a wrapper, the wrapper's child. */
  nodePid(): number;
}

const launched: DataDirServe[] = [];

/** A command that runs serve: its words before node, and where the program lies as that command sees it. */
export interface Wrapper {
  command: string[];
  /** Whether node runs as a child of the command (else the command execs it: the same process). */
  forks: boolean;
  /** The package's root as the wrapped node sees it; PACKAGE_ROOT when not given. */
  programRoot?: string;
}

/** `unshare` with a PID namespace of its own and /proc to match, as a container runs: node is process 1 there. */
export const IN_PID_NAMESPACE: Wrapper = {
  command: ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"],
  forks: true,
};

/** As nobody (65534), with no supplementary groups, and killed with the test's process. */
const NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--pdeathsig", "SIGKILL"];

/**
 * As nobody, with the program where nobody can read it. A checkout under a directory only its owner may enter (a
 * clone in root's home, or under `mktemp -d`) keeps node from loading it as another user, and the test would
 * measure where the checkout lies, not the product: so the checkout is bind-mounted, in a mount namespace of the
 * child's own (gone with it), at a directory anyone may enter. Returns why not where even that cannot serve nobody
 * (files of the checkout nobody may read): outside CI the test skips with it, in CI it fails.
 */
export function asNobody(): Wrapper | { unusable: string } {
  const at = mkdtempSync(join(tmpdir(), "example-conformance-program-"));
  chmodSync(at, 0o755);
  dirs.push(at);
  const wrapper: Wrapper = {
    // unshare, sh and setpriv each exec the next: node is the process spawned.
    command: [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      'mount --bind "$1" "$2" && shift 2 && exec "$@"',
      "sh",
      PACKAGE_ROOT,
      at,
      ...NOBODY,
    ],
    forks: false,
    programRoot: at,
  };
  const [command, ...rest] = [
    ...wrapper.command,
    process.execPath,
    join(at, "bin", "example-conformance.js"),
    "--version",
  ];
  const tried = spawnSync(command as string, rest, { encoding: "utf8", timeout: 30_000 });
  if (tried.status === 0) return wrapper;
  const why =
    `the program cannot be run as uid 65534 here, even bind-mounted at ${at}: ` +
    `${(tried.stderr || tried.error?.message || `exit ${tried.status}`).trim().split("\n")[0]}`;
  if (process.env.CI) throw new Error(why);
  return { unusable: why };
}

/** setpriv execs what follows with SIGKILL as its parent-death signal: a serve never outlives the test's process. */
const LIFELINE = ["setpriv", "--pdeathsig", "SIGKILL"];

/** What node itself is given for a serve: options before the program (`--import` of a shim), and environment. */
export interface NodeSetting {
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
}

/** `serve --data-dir DIR` on free ports, quiet, with `args` after and `wrap` (a command that runs the rest) before. */
export function serveDataDir(
  dir: string,
  args: string[] = [],
  wrap: Wrapper = { command: [], forks: false },
  node: NodeSetting = {},
): DataDirServe {
  const argv = [
    process.execPath,
    ...(node.nodeArgs ?? []),
    `${wrap.programRoot ?? PACKAGE_ROOT}/bin/example-conformance.js`,
    "serve",
    "--grpc-port",
    "0",
    "--http-port",
    "0",
    "--log-level",
    "silent",
    "--data-dir",
    dir,
    ...args,
  ];
  const [command, ...rest] = [...LIFELINE, ...wrap.command, ...argv] as [string, ...string[]];
  const child = spawn(command, rest, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...node.env } });
  let err = "";
  let out = "";
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })),
  );
  const listening = new Promise<{ grpcPort: number; httpPort: number } | undefined>((resolve) => {
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
      const g = /grpc 127\.0\.0\.1:(\d+)/.exec(out);
      const h = /http http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (g?.[1] && h?.[1]) resolve({ grpcPort: Number(g[1]), httpPort: Number(h[1]) });
    });
    void exited.then(() => resolve(undefined));
  });
  const nodePid = () => {
    if (!wrap.forks) return child.pid as number;
    const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(/\s+/);
    return Number(children[0]);
  };
  const served = { child, listening, exited, stderr: () => err, nodePid };
  launched.push(served);
  return served;
}

/** SIGKILL to node and its wrapper: nothing runs after it, as when a host or container is killed. */
export function killHard(s: DataDirServe): void {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  try {
    process.kill(s.nodePid(), "SIGKILL");
  } catch {
    // already gone
  }
  s.child.kill("SIGKILL");
}

/** For afterEach: every serve this module started is killed (a stopped one is continued first, so that it dies). */
export async function killAll(): Promise<void> {
  for (const s of launched.splice(0)) {
    try {
      process.kill(s.nodePid(), "SIGCONT");
    } catch {
      // gone
    }
    killHard(s);
    await s.exited;
  }
}

/** One POST of a message: its status, what came with it, and on 201 its id. */
export async function create(
  httpPort: number,
  body: string,
): Promise<{ status: number | string; id?: string; text?: string }> {
  try {
    const res = await fetch(`http://127.0.0.1:${httpPort}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, text, ...(res.status === 201 && { id: (JSON.parse(text) as { id: string }).id }) };
  } catch (err) {
    return { status: `no answer: ${(err as Error).message}` };
  }
}

/** Every message the collection holds, id to body, following rel=next (bounded). */
export async function listAll(httpPort: number): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  let next: string | undefined = "/messages?limit=1000";
  for (let pages = 0; next !== undefined && pages < 100; pages++) {
    const res = await fetch(`http://127.0.0.1:${httpPort}${next}`, { signal: AbortSignal.timeout(30_000) });
    const page = (await res.json()) as {
      messages: Array<{ id: string; body: string }>;
      links: Array<{ rel: string; href: string }>;
    };
    for (const m of page.messages) all.set(m.id, m.body);
    next = page.links.find((l) => l.rel === "next")?.href;
  }
  return all;
}

export const isRoot = process.getuid?.() === 0;

const dirs: string[] = [];

/** A new empty directory under the system's temporary one; removeDataDirs (afterAll) removes them all. */
export function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "example-conformance-data-dir-"));
  dirs.push(dir);
  return dir;
}

export function removeDataDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** The ports of a serve that must listen: otherwise an error with how it ended and what it said. */
export async function ports(s: DataDirServe): Promise<{ grpcPort: number; httpPort: number }> {
  const p = await s.listening;
  if (p === undefined) throw new Error(`serve ended before listening: ${JSON.stringify(await s.exited)} ${s.stderr()}`);
  return p;
}

/** Writes `n` messages `${prefix}-i`, four at a time: the ids of those acknowledged (201), and every other answer. */
export async function writeMany(
  httpPort: number,
  n: number,
  prefix: string,
): Promise<{ ids: string[]; others: Array<number | string> }> {
  const ids: string[] = [];
  const others: Array<number | string> = [];
  for (let i = 0; i < n; i += 4) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(4, n - i) }, (_, k) => create(httpPort, `${prefix}-${i + k}`)),
    );
    for (const a of answers) {
      if (a.id !== undefined) ids.push(a.id);
      else others.push(a.status);
    }
  }
  return { ids, others };
}

/** What a process wrote to stderr, as lines. */
export const lines = (text: string) => text.trim().split("\n");
