// contract.go-package: the contract file carries option go_package = "./example" (spec part 2).
import { contractFiles } from "../../harness/buf/descriptor.js";
import { fail, pass, type CheckDefinition } from "../../harness/check.js";

export const EXPECTED_GO_PACKAGE = "./example";

export const contractGoPackage: CheckDefinition = {
  id: "contract.go-package",
  title: `every contract file sets option go_package (the spec's value: ${EXPECTED_GO_PACKAGE})`,
  severity: "MUST",
  area: "contract",
  profile: "contract",
  spec: "§2",
  async run(ctx) {
    const files = await contractFiles(ctx);
    const missing = files.filter((f) => (f.options?.goPackage ?? "").trim() === "").map((f) => f.name);
    if (missing.length > 0) {
      return fail(`no go_package option in ${missing.join(", ")}: the Go generator cannot determine the import path`);
    }
    const other = files.filter((f) => f.package === "example" && f.options?.goPackage !== EXPECTED_GO_PACKAGE);
    if (other.length > 0) {
      const found = other.map((f) => `${f.name}: ${JSON.stringify(f.options?.goPackage)}`).join(", ");
      return fail(`go_package differs from the spec's ${JSON.stringify(EXPECTED_GO_PACKAGE)}: ${found}`);
    }
    return pass(`go_package ${JSON.stringify(EXPECTED_GO_PACKAGE)} in ${files.map((f) => f.name).join(", ")}`);
  },
};
