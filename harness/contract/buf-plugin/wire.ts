// The pluginrpc and buf check-plugin messages the plugin speaks, on the types protoc-gen-es generates from the
// subsets in harness/_internals/proto (npm run generate).
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import {
  AnnotationSchema,
  CheckRequestSchema,
  CheckResponseSchema,
  ListCategoriesResponseSchema,
  ListRulesResponseSchema,
  RuleType,
} from "../../_internals/gen/buf/plugin/check/v1/check_pb.js";
import { RequestSchema, ResponseSchema, SpecSchema } from "../../_internals/gen/pluginrpc/v1/pluginrpc_pb.js";

export const TYPE_URL_PREFIX = "type.googleapis.com/";

export interface Any {
  typeUrl: string;
  value: Uint8Array;
}

export interface PluginFile {
  proto: FileDescriptorProto;
  isImport: boolean;
}

export interface CheckRequest {
  files: PluginFile[];
  ruleIds: string[];
}

export interface Rule {
  id: string;
  purpose: string;
  isDefault: boolean;
  type: "lint" | "breaking";
}

export interface Annotation {
  ruleId: string;
  message: string;
  fileName: string;
  sourcePath: number[];
}

/** pluginrpc.v1.Code values used here. */
export const PluginCode = { INVALID_ARGUMENT: 3, UNIMPLEMENTED: 12, INTERNAL: 13 } as const;

/** Decodes pluginrpc.v1.Request. */
export function decodeRequest(bytes: Uint8Array): Any | undefined {
  const value = fromBinary(RequestSchema, bytes).value;
  return value && { typeUrl: value.typeUrl, value: value.value };
}

/** Decodes buf.plugin.check.v1.CheckRequest. */
export async function decodeCheckRequest(bytes: Uint8Array): Promise<CheckRequest> {
  const req = fromBinary(CheckRequestSchema, bytes);
  const { FileDescriptorProtoSchema } = await import("@bufbuild/protobuf/wkt");
  return {
    files: req.files.map((f) => ({
      proto: f.fileDescriptorProto ?? create(FileDescriptorProtoSchema),
      isImport: f.isImport,
    })),
    ruleIds: req.ruleIds,
  };
}

/** Encodes pluginrpc.v1.Response with either a value or an error. */
export function encodeResponse(result: { value: Any } | { error: { code: number; message: string } }): Uint8Array {
  return toBinary(
    ResponseSchema,
    create(ResponseSchema, "value" in result ? { value: result.value } : { error: result.error }),
  );
}

/** Encodes pluginrpc.v1.Spec. */
export function encodeSpec(paths: readonly string[]): Uint8Array {
  return toBinary(SpecSchema, create(SpecSchema, { procedures: paths.map((path) => ({ path })) }));
}

/** Encodes buf.plugin.check.v1.ListRulesResponse (one page, no token). */
export function encodeListRulesResponse(rules: readonly Rule[]): Uint8Array {
  return toBinary(
    ListRulesResponseSchema,
    create(ListRulesResponseSchema, {
      rules: rules.map((r) => ({
        id: r.id,
        default: r.isDefault,
        purpose: r.purpose,
        type: r.type === "lint" ? RuleType.LINT : RuleType.BREAKING,
      })),
    }),
  );
}

/** Encodes an empty ListCategoriesResponse: our rules belong to no category, so STANDARD never pulls them in. */
export function encodeListCategoriesResponse(): Uint8Array {
  return toBinary(ListCategoriesResponseSchema, create(ListCategoriesResponseSchema));
}

/** Encodes buf.plugin.check.v1.CheckResponse. */
export function encodeCheckResponse(annotations: readonly Annotation[]): Uint8Array {
  return toBinary(
    CheckResponseSchema,
    create(CheckResponseSchema, {
      annotations: annotations.map((a) =>
        create(AnnotationSchema, {
          ruleId: a.ruleId,
          message: a.message,
          fileLocation: { fileName: a.fileName, sourcePath: a.sourcePath },
        }),
      ),
    }),
  );
}
