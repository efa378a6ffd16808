import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathKind } from "./files.ts";

/**
 * A `--system-prompt` / `--append-system-prompt` value: the contents of the file it names when
 * a file is there (relative to `cwd`), else the text itself. A file that exists but cannot be
 * read throws rather than being sent as its own path.
 */
export function textOrFile(value: string, cwd: string): string {
  const path = resolve(cwd, value);
  return pathKind(path) === "file" ? readFileSync(path, "utf8") : value;
}
