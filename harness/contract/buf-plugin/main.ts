// Process entry of the buf check plugin: reads the request, runs it, writes the response. buf's questions about the
// plugin itself are answered from memory when the same code answered them before (memo.ts); the server, and the
// protobuf runtime under it, are loaded only when there is work for them.
import { isAboutItself, recall, remember } from "./memo.js";

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const args = process.argv.slice(2);
const input = new Uint8Array(Buffer.concat(chunks));
const aboutItself = isAboutItself(args, input);
const remembered = aboutItself ? recall(args, input) : undefined;
if (remembered !== undefined) {
  process.stdout.write(remembered);
} else {
  const { runPlugin } = await import("./server.js");
  const result = await runPlugin(args, input);
  if (aboutItself && result.exitCode === 0 && result.stderr === "") remember(args, input, result.stdout);
  if (result.stderr) process.stderr.write(result.stderr);
  process.stdout.write(result.stdout, () => {
    process.exitCode = result.exitCode;
  });
}
