/**
 * `-e npm:<name>[@version]` and `-e git:…` (or a git URL): a package tried for one run, as the
 * reference's `pi -e …`, installed under `$PION_HOME/tmp/extensions` the first time and loaded
 * from there, without touching settings. An npm package is installed into `npm/`; a git one is
 * cloned into `git-<host>/<hash of host, path and ref>/<path>` and, on later runs, fetched and
 * reset to its ref (a commit already checked out is not fetched). With PI_OFFLINE=1 nothing is
 * fetched and a copy from before is used. An install that fails is said on stderr; the entry then
 * stays as given and the loader reports it as missing, while a refresh that fails keeps the old copy.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { temporaryGitDir } from "../extensions/git-source.ts";
import { npmPackageDir, parseSource } from "../extensions/packages.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { installGitPackage, installNpmPackage } from "../extensions/package-install.ts";

/** Whether an `-e` entry names a package source rather than a path (the prefixes the reference reads as non-local). */
export const isPackageEntry = (entry: string): boolean => /^(npm:|git:|https?:|ssh:)/.test(entry.trim());

export async function temporaryPackages(entries: string[], home: string, env: Record<string, string | undefined>): Promise<string[]> {
  const root = join(home, "tmp", "extensions");
  const offline = env.PI_OFFLINE === "1";
  const out: string[] = [];
  for (const entry of entries) {
    const source = isPackageEntry(entry) ? parseSource(entry) : undefined;
    if (!source || source.type === "local") {
      out.push(entry);
      continue;
    }
    const dir = source.type === "npm" ? npmPackageDir(root, source.name) : temporaryGitDir(root, source);
    // A pinned npm version already there is used as it is; anything else is (re)installed or refreshed once per run.
    const pinned = source.type === "npm" && source.version !== undefined && /^\d+\.\d+\.\d+/.test(source.version);
    if (!offline && (!existsSync(dir) || !pinned)) {
      try {
        if (source.type === "npm") await installNpmPackage({ env }, source.spec, root);
        else await installGitPackage({ env }, source, dir);
      } catch (err) {
        log("packages", `${entry}: ${errorMessage(err)}${existsSync(dir) ? " (using the copy installed before)" : ""}`);
      }
    }
    out.push(existsSync(dir) ? dir : entry);
  }
  return out;
}
