import { statSync } from "node:fs";

/**
 * What is at a path, for discovery: a missing path (or one through a file) is neither, and
 * never costs an exception (start-up asks this of folders that mostly do not exist).
 */
function kind(path: string): "dir" | "file" | "other" | undefined {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st === undefined ? undefined : st.isDirectory() ? "dir" : st.isFile() ? "file" : "other";
  } catch {
    return undefined; // ENOTDIR, EACCES: nothing to discover there
  }
}

export const isDir = (path: string): boolean => kind(path) === "dir";
export const isFile = (path: string): boolean => kind(path) === "file";
