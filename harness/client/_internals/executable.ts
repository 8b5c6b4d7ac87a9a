// Where a command is: a file this process may execute, or a bare name found on a PATH.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

export function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable NAME in PATH's directories (empty entries skipped), as a path. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter))
    if (dir !== "" && isExecutable(join(dir, name))) return join(dir, name);
  return undefined;
}
