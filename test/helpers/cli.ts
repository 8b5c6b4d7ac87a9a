// Runs the CLI in process with captured output, as a user would see it.
import { main } from "../../harness/cli/main.js";

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    isTty: false,
    env: { ...env },
  });
  return { code, stdout, stderr };
}
