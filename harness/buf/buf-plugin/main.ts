// Process entry of the buf check plugin: reads the request, runs it, writes the response.
import { runPlugin } from "./server.js";

const chunks: Buffer[] = [];
for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
const result = await runPlugin(process.argv.slice(2), new Uint8Array(Buffer.concat(chunks)));
if (result.stderr) process.stderr.write(result.stderr);
process.stdout.write(result.stdout, () => {
  process.exitCode = result.exitCode;
});
