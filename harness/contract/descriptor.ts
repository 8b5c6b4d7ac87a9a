// Compiles a contract folder with buf into descriptors, for checks that read the contract's structure.
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { buildImage } from "./buf.js";

/** The contract's own files (imports left out), as buf compiled them. */
export async function loadContractFiles(dir: string): Promise<FileDescriptorProto[]> {
  const image = await buildImage(dir);
  return fromBinary(FileDescriptorSetSchema, image).file;
}

/** loadContractFiles once per run and folder: several checks read the same contract. */
export function contractFiles(ctx: {
  contractDir: string;
  memo: Map<string, Promise<unknown>>;
}): Promise<FileDescriptorProto[]> {
  const key = `contract-files:${ctx.contractDir}`;
  let files = ctx.memo.get(key) as Promise<FileDescriptorProto[]> | undefined;
  if (!files) {
    files = loadContractFiles(ctx.contractDir);
    ctx.memo.set(key, files);
  }
  return files;
}
