// check-client's side of gRPC: its calls come to the recording servers' gRPC port, and one is valid when it is a
// POST of Hello with gRPC's content type, a well-formed grpc-timeout and one length-prefixed Message.
import type { ServerHttp2Stream } from "node:http2";
import { encodeReply } from "../../client-check/scenarios.js";
import { HELLO_PATH } from "../rpc.js";
import { firstValue, frame, framedMessageBody, framedProblems, GRPC_TIMEOUT } from "../grpc-web/index.js";
import type { HelloAsk, RecordedCall, RecordingSide } from "../protocol.js";

async function grpcProblems(call: RecordedCall, maxBytes: number): Promise<string[]> {
  if (call.path !== HELLO_PATH || call.method !== "POST")
    return [`no procedure at ${call.method} ${call.path} (the contract's Hello is POST ${HELLO_PATH})`];
  const problems: string[] = [];
  const contentType = firstValue(call, "content-type") ?? "";
  if (!/^application\/grpc(\+proto)?\s*(;|$)/i.test(contentType))
    problems.push(`content-type ${JSON.stringify(contentType)} is not application/grpc or application/grpc+proto`);
  const timeout = firstValue(call, "grpc-timeout");
  if (timeout !== undefined && !GRPC_TIMEOUT.test(timeout))
    problems.push(`grpc-timeout ${JSON.stringify(timeout)} is not 1-8 digits and a unit (H, M, S, m, u, n)`);
  return [...problems, ...(await framedProblems(call.body, firstValue(call, "grpc-encoding"), maxBytes))];
}

/**
 * gRPC's answer: a status alone (trailers-only) for a refusal or an error, else the reply's frame and grpc-status 0.
 */
async function answerGrpc(
  call: RecordedCall,
  stream: ServerHttp2Stream,
  ask: HelloAsk,
  refusal?: { code: number; message: string },
): Promise<void> {
  const status = (code: number, message: string) => {
    ask.said(ask.statusName(code));
    if (stream.destroyed || stream.headersSent) return;
    stream.respond(
      {
        ":status": 200,
        "content-type": "application/grpc",
        "grpc-status": String(code),
        "grpc-message": encodeURIComponent(message),
      },
      { endStream: true },
    );
  };
  if (refusal !== undefined) return status(refusal.code, refusal.message);
  const answer = await ask.answer(
    "proto",
    await framedMessageBody(call.body, firstValue(call, "grpc-encoding"), ask.maxBodyBytes),
  );
  if (answer === undefined || stream.destroyed) return;
  if (answer.kind === "error") return status(answer.code, answer.message);
  stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
  stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  stream.end(frame(0, encodeReply(answer)));
}

export const grpcRecording: RecordingSide = {
  title: "gRPC",
  port: "h2c",
  deadlineHeader: "grpc-timeout",
  problems: grpcProblems,
  answerH2c: answerGrpc,
};
