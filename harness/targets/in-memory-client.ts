// An RPC target with no socket: a handler function answers each call, as connect-es's router transport does, so that
// checks can be run against a few lines of code in a unit test.
import { Status, type MetadataValue, type UnaryCallOptions, type UnaryResult } from "../protocols/rpc.js";
import { HELLO_PATH } from "../protocols/rpc.js";

export interface InMemoryCall {
  /** The method path, /example.exampleService/Hello unless a check asks for another. */
  path: string;
  /** The request message's bytes, as the check sent them. */
  message: Uint8Array;
  metadata: Readonly<Record<string, MetadataValue>>;
}

/** What the handler answers: a message (status OK), or a status with details; headers and trailers optional. */
export type InMemoryAnswer =
  | { message: Uint8Array; headers?: Record<string, string[]>; trailers?: Record<string, string[]> }
  | { code: number; details?: string; headers?: Record<string, string[]>; trailers?: Record<string, string[]> };

export type InMemoryHandler = (call: InMemoryCall) => InMemoryAnswer | Promise<InMemoryAnswer>;

/** The ordinary client over a handler: deadlines hold, and a handler that throws answers UNKNOWN as a server would. */
export function createInMemoryClient(handler: InMemoryHandler) {
  return {
    /** No wire: the checks of a protocol's wire skip, saying so. */
    protocol: "in-memory" as const,
    async unary(request: Uint8Array, options: UnaryCallOptions = {}): Promise<UnaryResult> {
      // The target gives every call its deadline (the run's --timeout unless the check names one); without one, none.
      const { deadlineMs } = options;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<UnaryResult>((resolve) => {
        if (deadlineMs !== undefined)
          timer = setTimeout(
            () =>
              resolve({
                code: Status.DEADLINE_EXCEEDED,
                details: `no answer within ${deadlineMs} ms`,
                headers: {},
                trailers: {},
              }),
            deadlineMs,
          );
      });
      const answered = (async (): Promise<UnaryResult> => {
        try {
          const a = await handler({
            path: options.path ?? HELLO_PATH,
            message: request.slice(),
            metadata: { ...options.metadata },
          });
          const meta = { headers: a.headers ?? {}, trailers: a.trailers ?? {} };
          return "message" in a
            ? { code: Status.OK, details: "", response: a.message.slice(), ...meta }
            : { code: a.code, details: a.details ?? "", ...meta };
        } catch (err) {
          return {
            code: Status.UNKNOWN,
            details: err instanceof Error ? err.message : String(err),
            headers: {},
            trailers: {},
          };
        }
      })();
      try {
        return await Promise.race([answered, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    close(): void {},
  };
}

export type InMemoryClient = ReturnType<typeof createInMemoryClient>;
