// The README's documented command lines, run as written against the reference server: each gives the exit code
// and the verdict its comment promises.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../../../contract/paths.js";
import { startReferenceServer, type ReferenceServer } from "../../../reference-server/start.js";
import { BACKSTOP_MS } from "../../helpers/cli-process.js";

interface Example {
  line: string;
  exit: number;
  verdict?: string;
}

/** The lines of the README's example block, each `command   # exit N[, verdict][: words]`. */
function readmeExamples(): Example[] {
  const readme = readFileSync(join(PACKAGE_ROOT, "README.md"), "utf8");
  const block = /<!-- readme-examples: begin -->\n```sh\n([\s\S]*?)```\n<!-- readme-examples: end -->/.exec(
    readme,
  )?.[1];
  if (block === undefined) throw new Error("README.md has no readme-examples block");
  return block
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const m = /^(.*?)\s+# exit (\d)(?:, ([a-z ]+?))?(?::.*)?$/.exec(l);
      if (!m) throw new Error(`README example without a documented outcome: ${l}`);
      return { line: m[1] as string, exit: Number(m[2]), ...(m[3] !== undefined && { verdict: m[3] }) };
    });
}

const KEY = "readme-key-9f2c";
const TOKEN = "readme-token";
let server: ReferenceServer;

beforeAll(async () => {
  server = await startReferenceServer({ grpcPort: 0, httpPort: 0, log: "silent", apiKey: KEY });
});
afterAll(async () => {
  await server?.close();
});

/** Runs one line through sh, as a reader would paste it, with the documented addresses pointing at this server. */
function runLine(line: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const command = line
    .replaceAll(
      "npx example-conformance",
      `"${process.execPath}" "${join(PACKAGE_ROOT, "bin", "example-conformance.js")}"`,
    )
    .replaceAll("127.0.0.1:50051", server.grpcAddress)
    .replaceAll("http://127.0.0.1:8080", server.httpUrl);
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", KEY, TOKEN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const backstop = setTimeout(() => child.kill("SIGKILL"), BACKSTOP_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(backstop);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("the README's examples", () => {
  const examples = readmeExamples();
  it("are there to run", () => {
    expect(examples.length).toBeGreaterThan(5);
  });
  it.each(examples)(
    "$line: exit $exit $verdict",
    async (example) => {
      const run = await runLine(example.line);
      expect(run.code, run.stderr).toBe(example.exit);
      if (example.verdict !== undefined)
        expect(run.stdout.trimEnd().split("\n").at(-1)).toMatch(new RegExp(`^${example.verdict}: `));
      if (example.exit === 2 || example.exit === 3) expect(run.stderr).toMatch(/^example-conformance: .*\n$/);
    },
    120_000,
  );
});
