// The few pluginrpc and buf check-plugin messages the plugin speaks, encoded by hand over protobuf-es's wire
// primitives (field numbers from pluginrpc/v1/pluginrpc.proto and buf/plugin/check/v1/*.proto).
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import type { FileDescriptorProto } from "@bufbuild/protobuf/wkt";

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

/** Reads every field of a message, calling `onField` with a reader positioned at the value. */
function forEachField(bytes: Uint8Array, onField: (no: number, wt: WireType, r: BinaryReader) => void): void {
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    const before = r.pos;
    onField(no, wt, r);
    if (r.pos === before) r.skip(wt, no);
  }
}

/** Decodes pluginrpc.v1.Request { google.protobuf.Any value = 1 }. */
export function decodeRequest(bytes: Uint8Array): Any | undefined {
  let value: Any | undefined;
  forEachField(bytes, (no, wt, r) => {
    if (no === 1 && wt === WireType.LengthDelimited) value = decodeAny(r.bytes());
  });
  return value;
}

function decodeAny(bytes: Uint8Array): Any {
  const any: Any = { typeUrl: "", value: new Uint8Array() };
  forEachField(bytes, (no, wt, r) => {
    if (wt !== WireType.LengthDelimited) return;
    if (no === 1) any.typeUrl = r.string();
    else if (no === 2) any.value = r.bytes();
  });
  return any;
}

/**
 * Decodes buf.plugin.check.v1.CheckRequest (file_descriptors = 1, rule_ids = 4). The descriptor schema is
 * loaded here, not at start-up: buf starts the plugin nine times per run and only one call needs it.
 */
export async function decodeCheckRequest(bytes: Uint8Array): Promise<CheckRequest> {
  const [{ fromBinary }, { FileDescriptorProtoSchema }] = await Promise.all([
    import("@bufbuild/protobuf"),
    import("@bufbuild/protobuf/wkt"),
  ]);
  const decodeFile = (fileBytes: Uint8Array): PluginFile => {
    let proto: FileDescriptorProto = fromBinary(FileDescriptorProtoSchema, new Uint8Array());
    let isImport = false;
    forEachField(fileBytes, (no, wt, r) => {
      if (no === 1 && wt === WireType.LengthDelimited) proto = fromBinary(FileDescriptorProtoSchema, r.bytes());
      else if (no === 2 && wt === WireType.Varint) isImport = r.bool();
    });
    return { proto, isImport };
  };
  const req: CheckRequest = { files: [], ruleIds: [] };
  forEachField(bytes, (no, wt, r) => {
    if (wt !== WireType.LengthDelimited) return;
    if (no === 1) req.files.push(decodeFile(r.bytes()));
    else if (no === 4) req.ruleIds.push(r.string());
  });
  return req;
}

/** Encodes pluginrpc.v1.Response with either a value or an error. */
export function encodeResponse(result: { value: Any } | { error: { code: number; message: string } }): Uint8Array {
  const w = new BinaryWriter();
  if ("value" in result) {
    w.tag(1, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(result.value.typeUrl);
    w.tag(2, WireType.LengthDelimited).bytes(result.value.value);
    w.join();
  } else {
    w.tag(2, WireType.LengthDelimited).fork();
    w.tag(1, WireType.Varint).int32(result.error.code);
    w.tag(2, WireType.LengthDelimited).string(result.error.message);
    w.join();
  }
  return w.finish();
}

/** Encodes pluginrpc.v1.Spec { repeated Procedure { string path = 1 } procedures = 1 }. */
export function encodeSpec(paths: readonly string[]): Uint8Array {
  const w = new BinaryWriter();
  for (const path of paths) {
    w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(path).join();
  }
  return w.finish();
}

/** Encodes buf.plugin.check.v1.ListRulesResponse { repeated Rule rules = 2 } (one page, no token). */
export function encodeListRulesResponse(rules: readonly Rule[]): Uint8Array {
  const w = new BinaryWriter();
  for (const rule of rules) {
    w.tag(2, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(rule.id);
    if (rule.isDefault) w.tag(3, WireType.Varint).bool(true);
    w.tag(4, WireType.LengthDelimited).string(rule.purpose);
    w.tag(5, WireType.Varint).int32(rule.type === "lint" ? 1 : 2);
    w.join();
  }
  return w.finish();
}

/** Encodes an empty ListCategoriesResponse: our rules belong to no category, so STANDARD never pulls them in. */
export function encodeListCategoriesResponse(): Uint8Array {
  return new Uint8Array();
}

/** Encodes buf.plugin.check.v1.CheckResponse { repeated Annotation annotations = 1 }. */
export function encodeCheckResponse(annotations: readonly Annotation[]): Uint8Array {
  const w = new BinaryWriter();
  for (const a of annotations) {
    w.tag(1, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(a.ruleId);
    w.tag(2, WireType.LengthDelimited).string(a.message);
    w.tag(3, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(a.fileName);
    if (a.sourcePath.length > 0) {
      w.tag(2, WireType.LengthDelimited).fork();
      for (const n of a.sourcePath) w.int32(n);
      w.join();
    }
    w.join();
    w.join();
  }
  return w.finish();
}
