import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { listPackageFiles } from "../../../src/extensions/surface/package-files.ts";

const REF = process.env.PION_REFERENCE_PKG;
const P = referenceModules()["pi-coding-agent"] as Record<string, any>;
const refTest = REF ? test : test.skip;
const ROOT = resolve(import.meta.dir, "../../..");
const NAMES = ["getPackageDir", "getReadmePath", "getDocsPath", "getExamplesPath"] as const;

afterEach(() => {
  delete process.env.PI_PACKAGE_DIR;
  delete process.env.PION_PACKAGE_DIR;
});

describe("the shipped README and docs", () => {
  test("are written once under PION_HOME and answered as the reference's layout", () => {
    const dir = P.getPackageDir();
    expect(dir.startsWith(join(process.env.PION_HOME!, "cache", "package", ""))).toBe(true);
    expect([P.getReadmePath(), P.getDocsPath(), P.getExamplesPath()]).toEqual([join(dir, "README.md"), join(dir, "docs"), join(dir, "examples")]);
    for (const rel of listPackageFiles(ROOT)) expect(readFileSync(join(dir, rel))).toEqual(readFileSync(join(ROOT, rel)));
    expect(readFileSync(join(dir, "examples", "scripted-hello.json"), "utf8")).toBe(readFileSync(join(ROOT, "docs/examples/scripted-hello.json"), "utf8"));
    const written = statSync(P.getReadmePath()).mtimeMs;
    expect(P.getPackageDir()).toBe(dir);
    expect(statSync(P.getReadmePath()).mtimeMs).toBe(written);
  });

  test("PION_PACKAGE_DIR wins over PI_PACKAGE_DIR", () => {
    process.env.PI_PACKAGE_DIR = "/from/pi";
    process.env.PION_PACKAGE_DIR = "/from/pion";
    expect(P.getReadmePath()).toBe("/from/pion/README.md");
  });

  refTest("PI_PACKAGE_DIR is read as the reference reads it", async () => {
    const R = await import(join(REF!, "dist/index.js"));
    for (const value of ["/opt/pi", "~", "~/pkg", "file:///opt/pi%20pkg", "relative/dir"]) {
      process.env.PI_PACKAGE_DIR = value;
      expect(NAMES.map((n) => P[n]())).toEqual(NAMES.map((n) => R[n]()));
    }
    expect(P.getPackageDir()).toBe("relative/dir");
    process.env.PI_PACKAGE_DIR = "~/pkg";
    expect(P.getReadmePath()).toBe(join(homedir(), "pkg", "README.md"));
  });
});
