// The buf check plugin in process: pluginrpc framing, the rule list, and GO_PACKAGE_DEFINED's findings.
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema, FileOptionsSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { runPlugin } from "../../harness/contract/buf-plugin/server.js";

const CHECK = "/buf.plugin.check.v1.CheckService/Check";
const LIST_RULES = "/buf.plugin.check.v1.CheckService/ListRules";

function fields(bytes: Uint8Array): Array<[number, Uint8Array | number]> {
  const r = new BinaryReader(bytes);
  const out: Array<[number, Uint8Array | number]> = [];
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    out.push([no, wt === WireType.LengthDelimited ? r.bytes() : wt === WireType.Varint ? r.int32() : (r.skip(wt), 0)]);
  }
  return out;
}
const field = (bytes: Uint8Array, no: number) =>
  fields(bytes)
    .filter(([n]) => n === no)
    .map(([, v]) => v);
const text = (v: unknown) => new TextDecoder().decode(v as Uint8Array);

/** Unwraps pluginrpc.v1.Response: the Any's type URL and value, or the error. */
function response(stdout: Uint8Array) {
  const [any] = field(stdout, 1) as Uint8Array[];
  const [error] = field(stdout, 2) as Uint8Array[];
  if (error) return { error: { code: field(error, 1)[0], message: text(field(error, 2)[0]) } };
  return { typeUrl: text(field(any!, 1)[0]), value: (field(any!, 2)[0] as Uint8Array | undefined) ?? new Uint8Array() };
}

function request(value: Uint8Array, typeName: string): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).fork();
  w.tag(1, WireType.LengthDelimited).string(`type.googleapis.com/${typeName}`);
  w.tag(2, WireType.LengthDelimited).bytes(value);
  w.join();
  return w.finish();
}

function checkRequest(files: Array<{ name: string; goPackage?: string; isImport?: boolean }>, ruleIds: string[] = []) {
  const w = new BinaryWriter();
  for (const f of files) {
    const proto = create(FileDescriptorProtoSchema, {
      name: f.name,
      package: "example",
      syntax: "proto3",
      ...(f.goPackage !== undefined && { options: create(FileOptionsSchema, { goPackage: f.goPackage }) }),
    });
    w.tag(1, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).bytes(toBinary(FileDescriptorProtoSchema, proto));
    if (f.isImport) w.tag(2, WireType.Varint).bool(true);
    w.join();
  }
  for (const id of ruleIds) w.tag(4, WireType.LengthDelimited).string(id);
  return request(w.finish(), "buf.plugin.check.v1.CheckRequest");
}

async function annotations(stdin: Uint8Array) {
  const run = await runPlugin([CHECK, "--format", "binary"], stdin);
  expect(run.exitCode).toBe(0);
  const res = response(run.stdout);
  expect(res.typeUrl).toBe("type.googleapis.com/buf.plugin.check.v1.CheckResponse");
  return (field(res.value!, 1) as Uint8Array[]).map((a) => {
    const location = field(a, 3)[0] as Uint8Array;
    const path = field(location, 2)[0] as Uint8Array | undefined;
    return {
      ruleId: text(field(a, 1)[0]),
      message: text(field(a, 2)[0]),
      fileName: text(field(location, 1)[0]),
      sourcePath: path ? [...path] : [],
    };
  });
}

describe("buf check plugin", () => {
  it("speaks pluginrpc protocol 1", async () => {
    const run = await runPlugin(["--protocol"], new Uint8Array());
    expect(text(run.stdout)).toBe("1\n");
  });

  it("lists the three procedures buf requires in its spec", async () => {
    const run = await runPlugin(["--spec", "--format", "binary"], new Uint8Array());
    const paths = (field(run.stdout, 1) as Uint8Array[]).map((p) => text(field(p, 1)[0]));
    expect(paths).toEqual([CHECK, LIST_RULES, "/buf.plugin.check.v1.CheckService/ListCategories"]);
  });

  it("lists GO_PACKAGE_DEFINED as a lint rule with a purpose", async () => {
    const run = await runPlugin([LIST_RULES], request(new Uint8Array(), "buf.plugin.check.v1.ListRulesRequest"));
    const rules = field(response(run.stdout).value!, 2) as Uint8Array[];
    expect(rules).toHaveLength(1);
    expect(text(field(rules[0]!, 1)[0])).toBe("GO_PACKAGE_DEFINED");
    expect(text(field(rules[0]!, 4)[0])).toMatch(/^[A-Z].*\.$/); // buf's rule: capitalised, ends with a period
    expect(field(rules[0]!, 5)[0]).toBe(1); // RULE_TYPE_LINT
  });

  it("annotates a file without go_package at its package statement", async () => {
    const found = await annotations(checkRequest([{ name: "a.proto" }, { name: "b.proto", goPackage: "./b" }]));
    expect(found).toEqual([
      {
        ruleId: "GO_PACKAGE_DEFINED",
        message: expect.stringContaining("go_package"),
        fileName: "a.proto",
        sourcePath: [2],
      },
    ]);
  });

  it("treats a blank go_package as missing", async () => {
    expect(await annotations(checkRequest([{ name: "a.proto", goPackage: "  " }]))).toHaveLength(1);
  });

  it("skips imports", async () => {
    expect(await annotations(checkRequest([{ name: "dep.proto", isImport: true }]))).toEqual([]);
  });

  it("runs only the rules buf asks for", async () => {
    expect(await annotations(checkRequest([{ name: "a.proto" }], ["SOME_OTHER_RULE"]))).toEqual([]);
    expect(await annotations(checkRequest([{ name: "a.proto" }], ["GO_PACKAGE_DEFINED"]))).toHaveLength(1);
  });

  it("returns an unknown procedure as a pluginrpc error with exit 0", async () => {
    const run = await runPlugin(["/buf.plugin.check.v1.CheckService/Nope"], new Uint8Array());
    expect(run.exitCode).toBe(0);
    expect(response(run.stdout).error).toEqual({ code: 12, message: expect.stringContaining("Nope") });
  });

  it("returns a malformed request as INVALID_ARGUMENT", async () => {
    const run = await runPlugin([CHECK], new Uint8Array([0x0a, 0xff]));
    expect(response(run.stdout).error).toMatchObject({ code: 3 });
  });

  it("refuses the json format with a usage error", async () => {
    const run = await runPlugin(["--spec", "--format", "json"], new Uint8Array());
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/only "binary"/);
  });
});
