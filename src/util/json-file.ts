import { existsSync, readFileSync } from "node:fs";

/** Read a JSON config file; a missing file is `undefined`, a bad one an error naming the file. */
export function readJsonFile(path: string): unknown {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`Invalid JSON in ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
