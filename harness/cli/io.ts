// Where the CLI writes: the process's streams in use, buffers in tests.

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stdout is a terminal (colour and progress lines only then). */
  isTty: boolean;
  /** Whether stderr is a terminal: a progress line is redrawn in place there, printed once a second elsewhere. */
  stderrIsTty?: boolean;
  env: Readonly<Record<string, string | undefined>>;
}

export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  isTty: Boolean(process.stdout.isTTY),
  stderrIsTty: Boolean(process.stderr.isTTY),
  env: process.env,
};
