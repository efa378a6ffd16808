/**
 * pi-coding-agent's paths into its own installed package: `getPackageDir()`, `getReadmePath()`,
 * `getDocsPath()`, `getExamplesPath()`. The reference answers folders of its npm package; pion
 * is one binary, so the README and docs it embeds (package-files.ts) are written out on the first
 * call into `$PION_HOME/cache/package/<version>-<content hash>/` (README.md, docs/, and examples/
 * holding docs/examples, the reference's layout) and those paths are answered. The folder is
 * named by its content, so a new build (or an edited doc, from source) gets a new one; it is
 * written to a temporary name and renamed, so a reader never sees half of it. `PI_PACKAGE_DIR`
 * (or pion's `PION_PACKAGE_DIR`) names the folder instead, as in the reference, and nothing is
 * written then.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { envSetting, pionHome, VERSION } from "../../config.ts";

/** Repository-relative path → where its bytes are: the embedded file in the binary, the repository's own from source. */
function shippedFiles(): Record<string, string> {
  // Loaded only now, never at start-up (build.ts swaps the module for the binary's embedded files).
  return (require("./package-docs.ts") as { default: Record<string, string> }).default;
}

/** The reference's reading of a path from the environment: `~` expanded, a `file://` URL as its path. */
function fromEnv(value: string): string {
  if (value === "~") return homedir();
  if (value.startsWith("~/")) return join(homedir(), value.slice(2));
  return value.startsWith("file://") ? fileURLToPath(value) : value;
}

let written: string | undefined;

/** The folder the shipped files are written to (once per content), written if it is not there. */
function materialised(): string {
  if (written && existsSync(written)) return written;
  const contents = Object.entries(shippedFiles()).map(([rel, from]) => [rel, readFileSync(from)] as const);
  const hasher = new Bun.CryptoHasher("sha256");
  for (const [rel, bytes] of contents) hasher.update(rel).update(bytes);
  const parent = join(pionHome(), "cache", "package");
  const dir = join(parent, `${VERSION}-${hasher.digest("hex").slice(0, 12)}`);
  if (!existsSync(dir)) {
    mkdirSync(parent, { recursive: true, mode: 0o700 });
    const tmp = mkdtempSync(join(parent, ".partial-"));
    try {
      for (const [rel, bytes] of contents) {
        const targets = [rel, ...(rel.startsWith("docs/examples/") ? [rel.slice("docs/".length)] : [])];
        for (const target of targets) {
          mkdirSync(dirname(join(tmp, target)), { recursive: true });
          writeFileSync(join(tmp, target), bytes);
        }
      }
      mkdirSync(join(tmp, "examples"), { recursive: true });
      renameSync(tmp, dir);
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      // Another pion wrote the same folder first: its copy is as good as ours.
      if (!existsSync(dir)) throw err;
    }
  }
  written = dir;
  return dir;
}

export function getPackageDir(): string {
  const override = envSetting(process.env, "PION_PACKAGE_DIR", "PI_PACKAGE_DIR");
  return override ? fromEnv(override) : materialised();
}

export const getReadmePath = (): string => resolve(getPackageDir(), "README.md");
export const getDocsPath = (): string => resolve(getPackageDir(), "docs");
export const getExamplesPath = (): string => resolve(getPackageDir(), "examples");

export const configPathExports: Record<string, unknown> = { getPackageDir, getReadmePath, getDocsPath, getExamplesPath };
