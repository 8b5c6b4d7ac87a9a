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

/** Errors that say the reader of a stream went away: `check --list | head -1`, a closed terminal, `2>&-`. */
const READER_GONE = new Set(["EPIPE", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END", "EBADF"]);

/**
 * A writer to a process stream that goes quiet when its reader closes: what is left to write is dropped and the
 * command goes on to its end and its own exit code (the report files it was asked for are still written), with no
 * stack trace and nothing on stderr. Any other write error is left to the process's handler (one line, exit 70).
 */
export function quietWhenClosed(stream: NodeJS.WritableStream): (text: string) => void {
  let closed = false;
  let listening = false;
  return (text) => {
    if (closed) return;
    if (!listening) {
      listening = true;
      stream.on("error", (err: NodeJS.ErrnoException) => {
        if (err.code !== undefined && READER_GONE.has(err.code)) closed = true;
        else throw err;
      });
    }
    stream.write(text);
  };
}

export const processIo: CliIo = {
  stdout: quietWhenClosed(process.stdout),
  stderr: quietWhenClosed(process.stderr),
  isTty: Boolean(process.stdout.isTTY),
  stderrIsTty: Boolean(process.stderr.isTTY),
  env: process.env,
};
