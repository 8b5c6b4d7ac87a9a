// Writes the buf check plugin's answers to the questions buf asks about the plugin itself, from the compiled
// plugin, for its entry (proto/plugin/buf-plugin-example) to give without starting node. Run by `npm run build`
// after tsc; an answer older than any module of the plugin is not used (the entry compares their times).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const plugin = join(root, "dist", "harness", "buf", "buf-plugin");
const { runPlugin } = await import(join(plugin, "server.js"));
const SERVICE = "/buf.plugin.check.v1.CheckService/";

/** Each question, as buf asks it; the two list calls' answers do not depend on their request (it is only decoded). */
const QUESTIONS = {
  protocol: ["--protocol"],
  spec: ["--spec", "--format", "binary"],
  "list-rules": [`${SERVICE}ListRules`, "--format", "binary"],
  "list-categories": [`${SERVICE}ListCategories`, "--format", "binary"],
};

mkdirSync(join(plugin, "answers"), { recursive: true });
for (const [name, args] of Object.entries(QUESTIONS)) {
  const run = await runPlugin(args, new Uint8Array());
  if (run.exitCode !== 0 || run.stderr !== "") throw new Error(`buf-plugin-answers: ${args.join(" ")}: ${run.stderr}`);
  writeFileSync(join(plugin, "answers", `${name}.bin`), run.stdout);
}
