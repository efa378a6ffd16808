import { constants } from "node:fs";
import { mkdir, open, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import { resolveThroughLinks } from "./real-path.ts";

/**
 * How the file tools read and write text. The default is the disk; an editor (ACP) can hold
 * files with unsaved changes, so its tools read and write through it instead.
 */
export interface TextFileOps {
  readText(abs: string): Promise<string>;
  /** Creates missing parent folders. `abs` has its symlinks resolved (real-path.ts `fileTarget`). */
  writeText(abs: string, content: string): Promise<void>;
}

export const diskTextOps: TextFileOps = {
  readText: (abs) => readFile(abs, "utf8"),
  async writeText(abs, content) {
    // The path was resolved before: a symlink made on the way since (while the folders were
    // created, or as the file itself) would carry the write elsewhere, so none is followed.
    const dir = dirname(abs);
    await mkdir(dir, { recursive: true });
    if (resolveThroughLinks(dir) !== dir) throw Object.assign(new Error(`a symlink appeared on the way to ${abs}`), { code: "ESYMLINK" });
    const file = await open(abs, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW);
    try {
      await file.writeFile(content);
    } finally {
      await file.close();
    }
  },
};
