/**
 * Writes reference-exports.json: every runtime name the reference's four packages export, with
 * its kind (class, function, or a constant's type) and what pion's virtual module of that name
 * does with it (export-surface.ts: `pion` behaves as the reference's, `headless` is terminal UI
 * done as the reference does in RPC mode, `unavailable` exists and throws when used). Run
 * `PION_REFERENCE_PKG=<folder of @earendil-works/pi-coding-agent> bun src/extensions/surface/gen-reference-exports.ts`;
 * test/unit/extensions/export-surface.test.ts fails when the file and the installed reference differ.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { referenceModules } from "./modules.ts";
import { describeSurface, REFERENCE_PACKAGES, type ReferenceExports } from "./export-surface.ts";

/** The runtime export list of the reference's packages installed beside `codingAgentDir`. */
export async function readReferenceExports(codingAgentDir: string): Promise<ReferenceExports> {
  const out: ReferenceExports = {};
  for (const pkg of REFERENCE_PACKAGES) {
    const [dir, sub = "index"] = pkg.split("/");
    const mod = (await import(join(codingAgentDir, "..", dir!, "dist", `${sub}.js`))) as Record<string, unknown>;
    out[pkg] = {};
    for (const name of Object.keys(mod).sort()) {
      const value = mod[name];
      const kind = typeof value === "function" ? (/^class\b/.test(Function.prototype.toString.call(value)) ? "class" : "function") : typeof value;
      out[pkg][name] = kind === "number" || kind === "boolean" ? { kind, value } : { kind };
    }
  }
  return out;
}

/** One line per name, so a change to the reference reads as a diff of names. */
export function formatSurface(surface: Record<string, Record<string, unknown>>): string {
  const pkgs = Object.entries(surface).map(([pkg, names]) => {
    const lines = Object.entries(names).map(([name, entry]) => `    ${JSON.stringify(name)}: ${JSON.stringify(entry)}`);
    return `  ${JSON.stringify(pkg)}: {\n${lines.join(",\n")}\n  }`;
  });
  return `{\n${pkgs.join(",\n")}\n}\n`;
}

if (import.meta.main) {
  const dir = process.env.PION_REFERENCE_PKG;
  if (!dir) throw new Error("set PION_REFERENCE_PKG to the folder of @earendil-works/pi-coding-agent");
  const text = formatSurface(describeSurface(await readReferenceExports(dir), referenceModules()));
  // --stdout: print it (the test compares, in a process where no extension plugin maps the reference's own imports).
  if (process.argv.includes("--stdout")) process.stdout.write(text);
  else writeFileSync(join(import.meta.dir, "reference-exports.json"), text);
}
