import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";

/**
 * Resolves a path as a model wrote it: relative to `cwd`, a leading `~` is the home
 * folder, and a leading `@` (some models copy it from file mentions) is dropped.
 */
export function resolveToolPath(input: string, cwd: string): string {
  return resolve(joinToolPath(input, cwd));
}

/**
 * The same path, absolute, but with `..` and `.` kept: after a symlink `..` leads to the
 * link target's parent, so only real-path.ts (which follows links as the kernel does) may
 * take them out.
 */
export function joinToolPath(input: string, cwd: string): string {
  let p = input.trim();
  if (p.startsWith("@")) p = p.slice(1);
  if (p === "~") return homedir();
  if (p.startsWith("~/")) return `${homedir()}/${p.slice(2)}`;
  return isAbsolute(p) ? p : `${cwd}/${p}`;
}

function errorCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err && typeof err.code === "string") return err.code;
  return undefined;
}

/** A file-system error rephrased for the model, naming the path as the model gave it. */
export function fsErrorMessage(err: unknown, path: string): string {
  switch (errorCode(err)) {
    case "ENOENT":
      return `File not found: ${path}`;
    case "EACCES":
    case "EPERM":
      return `Permission denied: ${path}`;
    case "EISDIR":
      return `${path} is a directory, not a file`;
    case "ENOTDIR":
      return `A parent of ${path} is not a directory`;
    case "ELOOP":
    case "ESYMLINK":
      return `${path} became a symlink, or one appeared on the way, since its permission was checked; nothing was written`;
    default:
      return err instanceof Error ? `${err.message} (${path})` : `${String(err)} (${path})`;
  }
}

/** Rethrows file-system errors (those with an errno code) with a message for the model; others pass through. */
export async function withFsErrors<T>(path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (errorCode(err) === undefined) throw err;
    throw new Error(fsErrorMessage(err, path), { cause: err });
  }
}
