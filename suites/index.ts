// The catalogue: every check, in the order a run reports them.
import type { CheckDefinition } from "../harness/check.js";
import { contractGoPackage } from "./contract/go-package.js";
import { contractLint } from "./contract/lint.js";
import { contractShape } from "./contract/shape.js";

export const catalogue: readonly CheckDefinition[] = [contractShape, contractGoPackage, contractLint];
