// check-client's side of gRPC-Web: its calls come to the recording servers' HTTP port with gRPC-Web's content type,
// and one is valid with the proto codec, a well-formed grpc-timeout and one length-prefixed Message (base64 in the
// text form).
import type { ServerResponse } from "node:http";
import { encodeReply } from "../../client/scenarios.js";
import { firstValue, framedMessageBody, framedProblems, GRPC_TIMEOUT } from "./recorded-frames.js";
import type { HelloAsk, RecordedCall, RecordingSide } from "../protocol.js";
import { frame } from "./codec.js";

async function grpcWebProblems(call: RecordedCall, maxBytes: number): Promise<string[]> {
  const contentType = firstValue(call, "content-type") ?? "";
  const text = /^application\/grpc-web-text/i.test(contentType);
  if (!/^application\/grpc-web(-text)?(\+proto)?\s*(;|$)/i.test(contentType))
    return [`content-type ${JSON.stringify(contentType)} is not gRPC-Web's with the proto codec`];
  const body = text ? Buffer.from(Buffer.from(call.body).toString("latin1"), "base64") : call.body;
  const timeout = firstValue(call, "grpc-timeout");
  const problems =
    timeout !== undefined && !GRPC_TIMEOUT.test(timeout)
      ? [`grpc-timeout ${JSON.stringify(timeout)} is not 1-8 digits and a unit`]
      : [];
  return [...problems, ...(await framedProblems(body, firstValue(call, "grpc-encoding"), maxBytes))];
}

/** gRPC-Web's answer: the reply's frame (if any) and the trailer frame, base64 when the call was in the text form. */
async function answerGrpcWeb(call: RecordedCall, res: ServerResponse, ask: HelloAsk): Promise<void> {
  const contentType = (firstValue(call, "content-type") ?? "").toLowerCase();
  const text = contentType.startsWith("application/grpc-web-text");
  const frames = text ? Buffer.from(Buffer.from(call.body).toString("latin1"), "base64") : call.body;
  const send = (payload: Uint8Array | undefined, code: number, message: string) => {
    if (res.headersSent) return;
    const trailer = Buffer.from(`grpc-status:${code}\r\ngrpc-message:${encodeURIComponent(message)}\r\n`, "latin1");
    const out = Buffer.concat([payload ? frame(0, payload) : new Uint8Array(), frame(0x80, trailer)]);
    res
      .writeHead(200, { "content-type": text ? "application/grpc-web-text+proto" : "application/grpc-web+proto" })
      .end(text ? out.toString("base64") : out);
  };
  const answer = await ask.answer(
    "proto",
    await framedMessageBody(frames, firstValue(call, "grpc-encoding"), ask.maxBodyBytes),
  );
  if (answer === undefined) return;
  if (answer.kind === "error") return send(undefined, answer.code, answer.message);
  send(encodeReply(answer), 0, "");
}

export const grpcWebRecording: RecordingSide = {
  title: "gRPC-Web",
  port: "http1",
  contentTypes: /^application\/grpc-web/,
  deadlineHeader: "grpc-timeout",
  problems: grpcWebProblems,
  answerHttp1: answerGrpcWeb,
};
