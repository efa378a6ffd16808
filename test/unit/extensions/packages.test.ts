import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { dedupePackages, parseSource, resourcesOf } from "../../../src/extensions/packages.ts";
import { packageResources } from "../../../src/extensions/package-resources.ts";
import { resolveFrom } from "../../../src/extensions/resolve.ts";
import { runPackagesCli } from "../../../src/modes/packages-cli.ts";
import { writeDepTree } from "../../support/dep-tree.ts";

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "pion-pkg-"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  return root;
}

describe("resolveFrom", () => {
  test("exports subpaths and conditions, main, parent node_modules, #imports, misses", () => {
    const root = writeDepTree();
    const nm = join(root, "node_modules");
    expect(resolveFrom("esm-dep", root)).toBe(join(nm, "esm-dep/dist/main.js"));
    expect(resolveFrom("esm-dep/sub", join(root, "lib"))).toBe(join(nm, "esm-dep/dist/sub.js"));
    expect(resolveFrom("esm-dep/cond", root, "require")).toBe(join(nm, "esm-dep/dist/req.js"));
    expect(resolveFrom("esm-dep/cond", root, "import")).toBe(join(nm, "esm-dep/dist/imp.js"));
    expect(resolveFrom("cjs-leaf", join(nm, "cjs-dep/lib"))).toBe(join(nm, "cjs-leaf/index.js"));
    expect(resolveFrom("#inner", join(root, "lib"))).toBe(join(root, "lib/inner.ts"));
    expect(resolveFrom("esm-dep/not-exported", root)).toBeUndefined();
    expect(resolveFrom("nothing-here", root)).toBeUndefined();
  });

  test("* patterns and scoped names", () => {
    const root = tree({
      "node_modules/@s/p/package.json": JSON.stringify({ name: "@s/p", exports: { "./features/*": "./src/features/*.js", "./features/private/*": null } }),
      "node_modules/@s/p/src/features/a.js": "",
    });
    expect(resolveFrom("@s/p/features/a", root)).toBe(join(root, "node_modules/@s/p/src/features/a.js"));
    expect(resolveFrom("@s/p/features/private/x", root)).toBeUndefined();
  });
});

describe("packages", () => {
  test("sources: npm with and without versions, scoped, git, local", () => {
    expect(parseSource("npm:@a/b@1.2.3")).toEqual({ type: "npm", spec: "@a/b@1.2.3", name: "@a/b", version: "1.2.3" });
    expect(parseSource("npm:pi-x")).toEqual({ type: "npm", spec: "pi-x", name: "pi-x" });
    expect(parseSource("git:github.com/a/b@v1").type).toBe("git");
    expect(parseSource("./here")).toEqual({ type: "local", path: "./here" });
  });

  test("the pi field's entries (globs, exclusions), else conventional folders, else index.ts", () => {
    const withManifest = tree({
      "package.json": JSON.stringify({ pi: { extensions: ["./src/*.ts", "!./src/skip.ts"], skills: ["./skills"], prompts: ["./prompts"] } }),
      "src/a.ts": "",
      "src/skip.ts": "",
      "skills/s/SKILL.md": "",
      "prompts/p.md": "",
    });
    expect(packageResources(withManifest)).toEqual({ extensions: [join(withManifest, "src/a.ts")], skills: [join(withManifest, "skills")], prompts: [join(withManifest, "prompts/p.md")] });
    const conventional = tree({ "package.json": "{}", "extensions/one.ts": "", "extensions/two/index.ts": "", "prompts/x.md": "" });
    expect(packageResources(conventional)).toEqual({ extensions: [join(conventional, "extensions/one.ts"), join(conventional, "extensions/two/index.ts")], skills: [], prompts: [join(conventional, "prompts/x.md")] });
    const bare = tree({ "index.ts": "" });
    expect(packageResources(bare).extensions).toEqual([join(bare, "index.ts")]);
  });

  test("one package per identity (the project's wins), settings filters, missing npm packages reported", () => {
    const user = tree({ "npm/node_modules/pi-x/package.json": JSON.stringify({ pi: { extensions: ["./a.ts", "./b.ts"] } }), "npm/node_modules/pi-x/a.ts": "", "npm/node_modules/pi-x/b.ts": "" });
    const project = tree({});
    const listed = [
      { entry: "npm:pi-x@1.0.0", base: user, level: "user" as const },
      { entry: "npm:pi-gone", base: user, level: "user" as const },
      { entry: { source: "npm:pi-x", extensions: ["!b.ts"] }, base: project, level: "project" as const },
    ];
    const packages = dedupePackages(listed);
    expect(packages.map((p) => [p.source, p.level])).toEqual([["npm:pi-gone", "user"], ["npm:pi-x", "project"]]);
    const warnings: string[] = [];
    // The project's entry names the project's own npm folder, where pi-x is not installed.
    expect(resourcesOf(packages, (m) => warnings.push(m)).extensions).toEqual([]);
    expect(warnings.length).toBe(2);
    const filtered = resourcesOf(dedupePackages([{ entry: { source: "npm:pi-x", extensions: ["a.ts"] }, base: user, level: "user" }]), () => {});
    expect(filtered.extensions).toEqual([join(user, "npm/node_modules/pi-x/a.ts")]);
  });
});

describe("pion install / remove / list", () => {
  const cli = async (home: string, cwd: string, args: string[], npm?: string) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runPackagesCli(args[0]!, args.slice(1), { home, cwd, env: { PATH: process.env.PATH }, out: (t) => out.push(t), err: (t) => err.push(t), ...(npm ? { npm } : {}) });
    return { code, out: out.join(""), err: err.join("") };
  };

  test("an npm source is installed with npm into $PION_HOME/npm and listed in settings.json; remove undoes both", async () => {
    const home = tree({ "settings.json": JSON.stringify({ defaultModel: "m" }) });
    // A stand-in npm: records its arguments and installs the named package.
    const npm = join(home, "fake-npm.sh");
    writeFileSync(npm, `#!/bin/sh\necho "$@" >> "${home}/npm-calls"\nif [ "$1" = install ]; then mkdir -p "$4/node_modules/pi-x" && echo '{"name":"pi-x"}' > "$4/node_modules/pi-x/package.json"; fi\nif [ "$1" = uninstall ]; then rm -rf "$4/node_modules/$2"; fi\n`, { mode: 0o755 });
    expect((await cli(home, home, ["install", "npm:pi-x@1.0.0"], npm)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8"))).toEqual({ defaultModel: "m", packages: ["npm:pi-x@1.0.0"] });
    expect(readFileSync(join(home, "npm-calls"), "utf8")).toContain(`install pi-x@1.0.0 --prefix ${join(home, "npm")}`);
    expect((await cli(home, home, ["install", "npm:pi-x@2.0.0"], npm)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8")).packages).toEqual(["npm:pi-x@2.0.0"]);
    expect((await cli(home, home, ["list"])).out).toContain(`npm:pi-x@2.0.0\n    ${join(home, "npm/node_modules/pi-x")}`);
    expect((await cli(home, home, ["remove", "npm:pi-x"], npm)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8")).packages).toEqual([]);
    expect(existsSync(join(home, "npm/node_modules/pi-x"))).toBe(false);
  });

  test("a local path is written relative to the settings folder; npm failures and missing paths are errors", async () => {
    const home = tree({});
    const pkg = tree({ "index.ts": "" });
    expect((await cli(home, pkg, ["install", "."])).code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8")).packages).toEqual([relative(home, pkg)]);
    expect((await cli(home, home, ["install", "./missing"])).code).toBe(1);
    const offline = await cli(home, home, ["install", "npm:pi-y"], join(home, "no-such-npm"));
    expect(offline.code).toBe(1);
    expect(offline.err).toContain("was not found");
    expect((await cli(home, home, ["install"])).code).toBe(2);
  });
});
