// Writes the buf check plugin's answers to the questions buf asks about the plugin itself, from the compiled
// plugin, for its entry (proto/plugin/buf-plugin-example) to give without starting node. Run by `npm run build`
// after tsc; an answer older than any module of the plugin is not used (the entry compares their times).
// scripts/bundle-action.js writes the same answers beside the Action's bundled plugin, from that plugin.
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SERVICE = "/buf.plugin.check.v1.CheckService/";

/** Each question, as buf asks it; the two list calls' answers do not depend on their request (it is only decoded). */
export const QUESTIONS = {
  protocol: ["--protocol"],
  spec: ["--spec", "--format", "binary"],
  "list-rules": [`${SERVICE}ListRules`, "--format", "binary"],
  "list-categories": [`${SERVICE}ListCategories`, "--format", "binary"],
};

/**
 * Writes DIR/answers/NAME.bin for each question: what `ask(args)` gives, the plugin's stdout for an empty request
 * ({ exitCode, stdout, stderr }); a question the plugin fails or complains about fails the build.
 */
export async function writeAnswers(dir, ask) {
  mkdirSync(join(dir, "answers"), { recursive: true });
  for (const [name, args] of Object.entries(QUESTIONS)) {
    const run = await ask(args);
    if (run.exitCode !== 0 || run.stderr !== "")
      throw new Error(`buf-plugin-answers: ${args.join(" ")}: ${run.stderr}`);
    writeFileSync(join(dir, "answers", `${name}.bin`), run.stdout);
  }
}

// Run as a script (npm run build), not imported (scripts/bundle-action.js): paths compared as the system resolves them.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const plugin = join(root, "dist", "harness", "buf", "buf-plugin");
  const { runPlugin } = await import(join(plugin, "server.js"));
  await writeAnswers(plugin, (args) => runPlugin(args, new Uint8Array()));
}
