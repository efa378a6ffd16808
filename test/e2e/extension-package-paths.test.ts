import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { listPackageFiles } from "../../src/extensions/surface/package-files.ts";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EXTENSION = join(ROOT, "test/fixtures/extensions/package-paths.ts");
const DISCOVERABLE = join(ROOT, "test/fixtures/extensions/discoverable");

/** What the extension reported from inside pion (its command's description). */
async function report(env: Record<string, string> = {}): Promise<Rec> {
  const dirs = tempDirs();
  const agentDir = join(dirs.home, "agent");
  mkdirSync(join(agentDir, "extensions"), { recursive: true });
  const p = new Pion({ ...dirs, env: { DISCOVER_DIR: DISCOVERABLE, DISCOVER_AGENT_DIR: agentDir, ...env }, args: ["--mode", "rpc", "-e", EXTENSION] });
  const r = await p.request({ type: "get_commands" });
  const command = (r.data.commands as Rec[]).find((c) => c.name === "report");
  expect(await p.close()).toBe(0);
  if (!command) throw new Error(`no report command; stderr: ${p.stderr}`);
  return { ...(JSON.parse(command.description as string) as Rec), home: dirs.home };
}

describe("an extension pion runs", () => {
  test.concurrent("reads the README, docs and examples pion ships, at paths under its home", async () => {
    const r = await report();
    const paths = r.paths as Record<string, string>;
    expect(paths.packageDir.startsWith(join(r.home as string, "cache", "package"))).toBe(true);
    expect(paths).toEqual({ packageDir: paths.packageDir, readme: join(paths.packageDir, "README.md"), docs: join(paths.packageDir, "docs"), examples: join(paths.packageDir, "examples") });
    expect(r.readmeHead).toBe(readFileSync(join(ROOT, "README.md"), "utf8").split("\n")[0]!);
    expect(r.docs).toEqual(readdirSync(join(ROOT, "docs")).sort());
    expect(r.examples).toEqual(readdirSync(join(ROOT, "docs/examples")).sort());
    // Every shipped file byte for byte (the screenshot too), the examples also under examples/.
    for (const rel of listPackageFiles(ROOT)) expect(readFileSync(join(paths.packageDir, rel))).toEqual(readFileSync(join(ROOT, rel)));
    for (const name of r.examples as string[]) expect(readFileSync(join(paths.examples, name))).toEqual(readFileSync(join(ROOT, "docs/examples", name)));
  });

  test.concurrent("is told PowerShell is only available on Windows, and still gets its tool definition", async () => {
    expect((await report()).powershell).toEqual({ tool: "powershell", config: "The powershell tool is only available on Windows." });
  });

  test.concurrent("PI_PACKAGE_DIR names the package folder instead", async () => {
    const pkg = tempDirs().cwd;
    for (const dir of ["docs", "examples"]) mkdirSync(join(pkg, dir));
    writeFileSync(join(pkg, "README.md"), "# another package\n");
    const r = await report({ PI_PACKAGE_DIR: pkg });
    expect((r.paths as Record<string, string>).readme).toBe(join(pkg, "README.md"));
    expect(r.readmeHead).toBe("# another package");
  });

  test.concurrent("loads a folder of extensions with discoverAndLoadExtensions and runs them with an ExtensionRunner", async () => {
    const { discovered } = await report();
    expect(discovered).toEqual({
      paths: [join(DISCOVERABLE, "greeter.ts"), join(DISCOVERABLE, "sub/index.ts")],
      loadErrors: [{ path: join(DISCOVERABLE, "not-an-extension.ts"), error: expect.any(String) }],
      tools: ["hello"],
      commands: ["greet:1", "greet:2"],
      input: { action: "transform", text: "shout" },
      blocked: { block: true, reason: "denied by greeter" },
      errors: ["greeter failed at agent_start"],
    });
  });
});
