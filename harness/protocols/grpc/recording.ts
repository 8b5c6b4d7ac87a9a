// check-client's side of gRPC: its calls come to the recording servers' gRPC port, and one is valid when it is a
// POST of Hello with gRPC's content type, a well-formed grpc-timeout and one length-prefixed Message.
import { HELLO_PATH } from "../../targets/grpc-target.js";
import { firstValue, framedProblems, GRPC_TIMEOUT } from "../grpc-web/index.js";
import type { RecordedCall, RecordingSide } from "../protocol.js";

async function grpcProblems(call: RecordedCall, maxBytes: number): Promise<string[]> {
  if (call.path !== HELLO_PATH || call.method !== "POST") return [`no procedure at ${call.method} ${call.path} (the contract's Hello is POST ${HELLO_PATH})`];
  const problems: string[] = [];
  const contentType = firstValue(call, "content-type") ?? "";
  if (!/^application\/grpc(\+proto)?\s*(;|$)/i.test(contentType)) problems.push(`content-type ${JSON.stringify(contentType)} is not application/grpc or application/grpc+proto`);
  const timeout = firstValue(call, "grpc-timeout");
  if (timeout !== undefined && !GRPC_TIMEOUT.test(timeout)) problems.push(`grpc-timeout ${JSON.stringify(timeout)} is not 1-8 digits and a unit (H, M, S, m, u, n)`);
  return [...problems, ...(await framedProblems(call.body, firstValue(call, "grpc-encoding"), maxBytes))];
}

export const grpcRecording: RecordingSide = { title: "gRPC", port: "h2c", deadlineHeader: "grpc-timeout", problems: grpcProblems };
