// The lint rules the buf check plugin adds to buf's own: each is a pure function from files to annotations.
import type { Annotation, PluginFile, Rule } from "./wire.js";

export interface LintRule extends Rule {
  check(files: readonly PluginFile[]): Annotation[];
}

// FileDescriptorProto field numbers, for source paths that buf turns into file:line:column.
const FILE_PACKAGE = 2;
const FILE_SYNTAX = 12;

export const goPackageDefined: LintRule = {
  id: "GO_PACKAGE_DEFINED",
  purpose: "Checks that every file sets option go_package, without which protoc-gen-go cannot place the code.",
  isDefault: true,
  type: "lint",
  check(files) {
    const out: Annotation[] = [];
    for (const { proto, isImport } of files) {
      if (isImport) continue;
      const goPackage = proto.options?.goPackage ?? "";
      if (goPackage.trim() !== "") continue;
      // Point at the package statement, else the syntax statement, so the report carries a line number.
      const sourcePath = proto.package !== "" ? [FILE_PACKAGE] : proto.syntax !== "" ? [FILE_SYNTAX] : [];
      out.push({
        ruleId: this.id,
        message:
          `File ${JSON.stringify(proto.name)} does not set option go_package; the Go generator cannot determine ` +
          `the import path without it.`,
        fileName: proto.name,
        sourcePath,
      });
    }
    return out;
  },
};

export const lintRules: readonly LintRule[] = [goPackageDefined];
