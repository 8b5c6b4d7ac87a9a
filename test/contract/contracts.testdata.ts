// The bad contracts of fixtures/contracts, read from their folders: the cases of contracts.test.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../../harness/_internals/paths.js";

export interface BadContract {
  name: string;
  dir: string;
  why: string;
  lint: string[];
  breaking: string[];
  failsChecks: string[];
}

export const CONTRACTS_DIR = join(PACKAGE_ROOT, "fixtures", "contracts");

export const badContracts: BadContract[] = readdirSync(CONTRACTS_DIR)
  .filter((name) => statSync(join(CONTRACTS_DIR, name)).isDirectory())
  .map((name) => {
    const dir = join(CONTRACTS_DIR, name);
    const expect = JSON.parse(readFileSync(join(dir, "expect.json"), "utf8")) as Omit<BadContract, "name" | "dir">;
    return { name, dir, ...expect };
  });
