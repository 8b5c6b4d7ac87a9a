// The calls a gRPC check makes, remembered as it makes them (the runner wraps its target), so that a failure can
// name the request that shows it: grpcurl.ts renders that request as a command, the report's retries list it.
import { decodeMessage } from "../common/message.js";
import type { GrpcTarget } from "./targets/grpc-target.js";
import { HELLO_PATH as HELLO, type UnaryCallOptions } from "./protocols/rpc.js";

export interface RecordedCall {
  request: Uint8Array;
  options: UnaryCallOptions;
  /** Whether the call got what Hello must give: OK with a reply that decodes as a Message. */
  readonly answered: boolean;
}

/**
 * The target with every unary call it makes remembered, with whether it was answered with a Message. That is judged
 * when asked (failingCall, for a failure's grpcurl line), not as each reply comes: the check decodes its replies
 * itself, and decoding each again here cost a passing run CPU for nothing (the receive-limit probe's echoes alone,
 * 8 MiB, about 45 ms).
 */
export function recording(target: GrpcTarget, calls: RecordedCall[]): GrpcTarget {
  return Object.assign(Object.create(target) as GrpcTarget, {
    async unary(request: Uint8Array, options: UnaryCallOptions = {}) {
      const result = await target.unary(request, options);
      const reply = result.code === 0 ? result.response : undefined;
      let answered: boolean | undefined;
      calls.push({
        request,
        options,
        get answered() {
          answered ??= reply !== undefined && decodeMessage(reply).ok;
          return answered;
        },
      });
      return result;
    },
  });
}

/**
 * The request that shows a failure, when one can: the last Hello call of the check that did not get a Message back.
 * A failure seen only across calls (replies that differ, a limit told from its neighbours) has none.
 */
export function failingCall(calls: readonly RecordedCall[]): RecordedCall | undefined {
  return calls.findLast((c) => !c.answered && (c.options.path ?? HELLO) === HELLO);
}
