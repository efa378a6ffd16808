import { lstatSync, readlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";

const MAX_LINKS = 40;

/**
 * Where the kernel would put a file at `abs` (absolute): every symlink on the way followed,
 * dangling ones included, and the part that does not exist yet appended as written (as the
 * write tool creates it). `undefined` when that cannot be told: a symlink loop, a folder
 * that cannot be read. Permission rules judge this path, and the file tools write to it.
 */
export function resolveThroughLinks(abs: string): string | undefined {
  const todo = abs.split("/").filter((p) => p !== "" && p !== ".").reverse();
  let cur = "/";
  let links = 0;
  while (todo.length > 0) {
    const part = todo.pop()!;
    if (part === "..") {
      cur = dirname(cur);
      continue;
    }
    const next = cur === "/" ? `/${part}` : `${cur}/${part}`;
    let isLink: boolean;
    try {
      isLink = lstatSync(next).isSymbolicLink();
    } catch (err) {
      if ((err as { code?: string }).code !== "ENOENT") return undefined;
      return resolve(next, ...todo.reverse());
    }
    if (!isLink) {
      cur = next;
      continue;
    }
    if (++links > MAX_LINKS) return undefined;
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      return undefined;
    }
    if (target.startsWith("/")) cur = "/";
    todo.push(...target.split("/").filter((p) => p !== "" && p !== ".").reverse());
  }
  return cur;
}

/**
 * The file a tool reads and writes for `abs`: where it resolves now, which must be where the
 * permission rules judged it (`checked`), when they did. `shown` names it as the model wrote it.
 */
export function fileTarget(abs: string, checked: string | undefined, shown: string): string {
  const real = resolveThroughLinks(abs);
  if (real === undefined) throw new Error(`Cannot resolve ${shown}: a symlink loop, or a folder on the way that cannot be read`);
  if (checked !== undefined && real !== checked) {
    throw new Error(`${shown} now leads to ${real}, not to ${checked}, where its permission was checked (a symlink on the way changed since). Nothing was written.`);
  }
  return real;
}

/** A boundary the file tools keep (pion's sandbox): why a resolved path may not be written or read. */
export interface FileBoundary {
  refusesWrite(real: string): string | undefined;
  refusesRead(real: string): string | undefined;
}

/** fileTarget, then the boundary's say on writing there. */
export function writeTarget(abs: string, checked: string | undefined, shown: string, boundary: FileBoundary | undefined): string {
  const real = fileTarget(abs, checked, shown);
  const why = boundary?.refusesWrite(real);
  if (why) throw new Error(why);
  return real;
}
