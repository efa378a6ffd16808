import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * How the file tools read and write text. The default is the disk; an editor (ACP) can hold
 * files with unsaved changes, so its tools read and write through it instead.
 */
export interface TextFileOps {
  readText(abs: string): Promise<string>;
  /** Creates missing parent folders. */
  writeText(abs: string, content: string): Promise<void>;
}

export const diskTextOps: TextFileOps = {
  readText: (abs) => readFile(abs, "utf8"),
  async writeText(abs, content) {
    await mkdir(dirname(abs), { recursive: true });
    await writeFile(abs, content);
  },
};
