/**
 * Published pi packages at pinned versions, installed with npm once into a cache folder outside
 * the repo (PION_PACKAGE_CACHE, default `$TMPDIR/pion-published-packages-<hash of the pins>`), so
 * runs after the first (and CI with a cached folder) do not fetch them again. Offline and without
 * a cache, `installPublished` answers why, and the suite that needs them is skipped.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PINNED: Record<string, string> = {
  "pi-subagents": "0.67.0",
  "pi-web-access": "0.28.0",
  "pi-mcp-adapter": "2.36.0",
  "pi-prompt-template-model": "0.12.2",
  "pi-aliases": "1.0.7",
  "pi-mermaid": "0.3.0",
  "pi-markdown-preview": "0.16.0",
  "@baochunli/pi-collaborating-agents": "0.4.6",
  "pi-plan-mode": "0.2.4",
  "pi-btw": "0.4.1",
};

const specs = Object.entries(PINNED).map(([name, version]) => `${name}@${version}`);
const hash = Bun.hash(specs.join(" ")).toString(36);

export const packageCache = (): string => process.env.PION_PACKAGE_CACHE ?? join(tmpdir(), `pion-published-packages-${hash}`);
export const packageDir = (name: string): string => join(packageCache(), "node_modules", name);

const installed = (): boolean => Object.keys(PINNED).every((name) => existsSync(join(packageDir(name), "package.json")));

/** undefined when every pinned package is in the cache (installing them if needed); else why not. */
export async function installPublished(): Promise<string | undefined> {
  if (installed()) return undefined;
  const root = packageCache();
  mkdirSync(root, { recursive: true });
  if (!existsSync(join(root, "package.json"))) writeFileSync(join(root, "package.json"), '{"name":"pion-test-packages","private":true}\n');
  try {
    const proc = Bun.spawn(["npm", "install", "--no-audit", "--no-fund", "--legacy-peer-deps", ...specs], { cwd: root, stdout: "pipe", stderr: "pipe" });
    const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) return `npm install failed (offline?): ${err.trim().split("\n").slice(-2).join(" ")}`;
  } catch (err) {
    return `npm is not available: ${String(err)}`;
  }
  return installed() ? undefined : "npm install left some packages missing";
}
