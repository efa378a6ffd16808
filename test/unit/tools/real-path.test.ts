import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { diskTextOps } from "../../../src/tools/file-ops.ts";
import { fileTarget, resolveThroughLinks } from "../../../src/tools/real-path.ts";

const dir = () => realpathSync(mkdtempSync(join(tmpdir(), "pion-real-")));

describe("resolveThroughLinks", () => {
  test("follows every link on the way, dangling ones too; the rest is appended as written", () => {
    const d = dir();
    mkdirSync(join(d, "src"));
    mkdirSync(join(d, "elsewhere"));
    symlinkSync("src", join(d, "lnk"));
    symlinkSync(join(d, "elsewhere", "not-yet"), join(d, "dangling"));
    expect(resolveThroughLinks(`${d}/lnk/new/a.txt`)).toBe(`${d}/src/new/a.txt`);
    expect(resolveThroughLinks(`${d}/dangling`)).toBe(`${d}/elsewhere/not-yet`);
    expect(resolveThroughLinks(`${d}/./src/../lnk/x`)).toBe(`${d}/src/x`);
  });

  test("`..` after a link is the link target's parent, as the kernel has it", () => {
    const d = dir();
    const out = dir();
    mkdirSync(join(d, "src"));
    symlinkSync(out, join(d, "src", "out"));
    expect(resolveThroughLinks(`${d}/src/out/../a.txt`)).toBe(join(out, "..", "a.txt"));
  });

  test("a loop cannot be resolved", () => {
    const d = dir();
    symlinkSync(join(d, "b"), join(d, "a"));
    symlinkSync(join(d, "a"), join(d, "b"));
    expect(resolveThroughLinks(`${d}/a/x`)).toBeUndefined();
  });
});

describe("writing where the rules looked", () => {
  test("fileTarget refuses a path that now leads elsewhere than where it was checked", () => {
    const d = dir();
    const out = dir();
    mkdirSync(join(d, "src"));
    const checked = resolveThroughLinks(`${d}/src/later/x.txt`)!;
    expect(checked).toBe(`${d}/src/later/x.txt`);
    symlinkSync(out, join(d, "src", "later")); // made by a call running beside this one
    expect(() => fileTarget(`${d}/src/later/x.txt`, checked, "src/later/x.txt")).toThrow(/now leads to .* not to .*where its permission was checked/);
    expect(fileTarget(`${d}/src/later/x.txt`, undefined, "src/later/x.txt")).toBe(join(out, "x.txt"));
  });

  test("the disk writer follows no link that appeared as the file itself", async () => {
    const d = dir();
    const out = dir();
    writeFileSync(join(out, "victim"), "safe\n");
    symlinkSync(join(out, "victim"), join(d, "f.txt"));
    await expect(diskTextOps.writeText(join(d, "f.txt"), "x")).rejects.toMatchObject({ code: "ELOOP" });
    expect(readFileSync(join(out, "victim"), "utf8")).toBe("safe\n");
    await diskTextOps.writeText(join(d, "new", "g.txt"), "y");
    expect(existsSync(join(d, "new", "g.txt"))).toBe(true);
  });
});
