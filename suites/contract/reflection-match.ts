// contract.reflection-match: when the target serves reflection, its exampleService is wire-compatible with the
// contract.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, type DescriptorProto, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import {
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
} from "../../harness/_internals/gen/grpc/reflection/v1/reflection_pb.js";
import { contractFiles } from "../../harness/contract/descriptor.js";
import { fail, pass, skip, type CheckDefinition } from "../../harness/check.js";
import { Status } from "../../harness/protocols/rpc.js";
import { target } from "../grpc/_internals/calls.js";
import { describeRaw, rawStatus } from "../grpc/_internals/raw.js";
import { GRPC } from "../../harness/protocols/grpc/index.js";

const SERVICE = "example.exampleService";
const REFLECTION_PATHS = [
  "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
  "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
];

function fileContainingSymbol(symbol: string): Uint8Array {
  return toBinary(
    ServerReflectionRequestSchema,
    create(ServerReflectionRequestSchema, { messageRequest: { case: "fileContainingSymbol", value: symbol } }),
  );
}

/** v1 and v1alpha share these messages' names and numbers, so one decoding serves both. */
function readResponse(bytes: Uint8Array): { files: FileDescriptorProto[]; error?: string } {
  try {
    const response = fromBinary(ServerReflectionResponseSchema, bytes).messageResponse;
    if (response.case === "errorResponse")
      return { files: [], error: "the reflection service answered with an error_response" };
    if (response.case !== "fileDescriptorResponse") return { files: [] };
    return { files: response.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b)) };
  } catch {
    return { files: [], error: "the reflection reply does not parse as a ServerReflectionResponse" };
  }
}

function messageIndex(files: readonly FileDescriptorProto[]): Map<string, DescriptorProto> {
  const index = new Map<string, DescriptorProto>();
  const add = (prefix: string, messages: readonly DescriptorProto[]) => {
    for (const m of messages) {
      const name = `${prefix}.${m.name}`;
      index.set(name, m);
      add(name, m.nestedType);
    }
  };
  for (const f of files) add(f.package ? `.${f.package}` : "", f.messageType);
  return index;
}

/** Every field of the contract's message is in the served one with the same number and type. */
function compareMessages(
  what: string,
  contract: DescriptorProto | undefined,
  served: DescriptorProto | undefined,
): string[] {
  if (!contract) return [];
  if (!served) return [`${what}: the served descriptor does not define it`];
  const out: string[] = [];
  for (const f of contract.field) {
    const s = served.field.find((x) => x.number === f.number);
    if (!s) out.push(`${what}: field ${f.number} (${f.name}) is missing`);
    else if (s.type !== f.type || s.label !== f.label)
      out.push(`${what}: field ${f.number} (${f.name}) has another type or label`);
  }
  return out;
}

export const contractReflectionMatch: CheckDefinition = {
  id: "contract.reflection-match",
  title: "the target's reflection descriptor of example.exampleService is wire-compatible with the contract",
  severity: "MUST",
  area: "grpc",
  profile: "contract",
  spec: "§2, §4.1",
  // gRPC server reflection is a gRPC streaming service.
  protocols: [GRPC],
  async run(ctx) {
    let files: FileDescriptorProto[] | undefined;
    for (const path of REFLECTION_PATHS) {
      const res = await target(ctx).raw({ path, body: [{ compressed: false, data: fileContainingSymbol(SERVICE) }] });
      const status = rawStatus(res);
      if (status === Status.UNIMPLEMENTED) continue;
      // Reflection refused some other way (behind auth, say) is reflection not offered, not a mismatch.
      if (status !== Status.OK) return skip(`reflection is not available: ${path} got ${describeRaw(res)}`);
      if (res.frames.length === 0) return fail(`${path} answered OK with no message`);
      const parsed = readResponse(res.frames[0]!.data);
      if (parsed.error)
        return fail(`${parsed.error} for ${SERVICE}: the target serves reflection but does not describe the service`);
      files = parsed.files;
      break;
    }
    if (!files) return skip("the target serves no reflection service");
    const contract = await contractFiles(ctx);
    const want = contract
      .flatMap((f) => f.service.map((s) => ({ f, s })))
      .find(({ f, s }) => `${f.package}.${s.name}` === SERVICE);
    const got = files
      .flatMap((f) => f.service.map((s) => ({ f, s })))
      .find(({ f, s }) => `${f.package}.${s.name}` === SERVICE);
    if (!want) return skip(`the contract under check does not declare ${SERVICE}`);
    if (!got) return fail(`the reflected files do not declare ${SERVICE}`);
    const wantMessages = messageIndex(contract);
    const gotMessages = messageIndex(files);
    const problems: string[] = [];
    for (const m of want.s.method) {
      const served = got.s.method.find((x) => x.name === m.name);
      if (!served) {
        problems.push(`method ${m.name} is not served`);
        continue;
      }
      if (
        Boolean(served.clientStreaming) !== Boolean(m.clientStreaming) ||
        Boolean(served.serverStreaming) !== Boolean(m.serverStreaming)
      ) {
        problems.push(`method ${m.name} streams differently`);
      }
      problems.push(
        ...compareMessages(
          `${m.name} request ${served.inputType}`,
          wantMessages.get(m.inputType),
          gotMessages.get(served.inputType),
        ),
      );
      problems.push(
        ...compareMessages(
          `${m.name} response ${served.outputType}`,
          wantMessages.get(m.outputType),
          gotMessages.get(served.outputType),
        ),
      );
    }
    if (problems.length > 0) return fail(problems.join("; "));
    return pass(`reflection describes ${SERVICE} compatibly (${got.s.method.length} method(s))`);
  },
};
