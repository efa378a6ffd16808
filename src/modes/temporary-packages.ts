/**
 * `-e npm:<name>[@version]`: a package tried for one run, as the reference's `pi -e npm:...`,
 * installed with the machine's npm under `$PION_HOME/tmp/extensions/npm` the first time and
 * loaded from there, without touching settings. An install that fails (offline) is said on stderr;
 * the entry then stays as given and the loader reports it as missing.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { npmPackageDir, parseSource } from "../extensions/packages.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { ensureNpmProject, runNpm } from "./packages-cli.ts";

export async function temporaryPackages(entries: string[], home: string, env: Record<string, string | undefined>): Promise<string[]> {
  const root = join(home, "tmp", "extensions");
  const out: string[] = [];
  for (const entry of entries) {
    const source = entry.startsWith("npm:") ? parseSource(entry) : undefined;
    if (source?.type !== "npm") {
      out.push(entry);
      continue;
    }
    const dir = npmPackageDir(root, source.name);
    // A pinned version already there is used as it is; anything else is (re)installed once per run.
    const pinned = source.version !== undefined && /^\d+\.\d+\.\d+/.test(source.version);
    if (!existsSync(dir) || !pinned) {
      try {
        await runNpm({ env }, ["install", source.spec, "--prefix", ensureNpmProject(root), "--legacy-peer-deps", "--no-audit", "--no-fund"]);
      } catch (err) {
        log("packages", `${entry}: ${errorMessage(err)}${existsSync(dir) ? " (using the copy installed before)" : ""}`);
      }
    }
    out.push(existsSync(dir) ? dir : entry);
  }
  return out;
}
