import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isIgnored, parseGitignore } from "../../../src/tools/gitignore.ts";
import { walk } from "../../../src/tools/walk.ts";
import { tmp } from "./harness.ts";

describe("gitignore rules", () => {
  const rules = parseGitignore(
    ["# comment", "", "*.log", "!important.log", "build/", "/top.txt", "docs/*.pdf", "**/cache", "a{b}"].join("\n"),
    "/r",
  );
  const cases: [string, boolean, boolean][] = [
    ["/r/x.log", false, true],
    ["/r/deep/y.log", false, true],
    ["/r/important.log", false, false],
    ["/r/build", true, true],
    ["/r/build", false, false],
    ["/r/sub/build", true, true],
    ["/r/top.txt", false, true],
    ["/r/sub/top.txt", false, false],
    ["/r/docs/a.pdf", false, true],
    ["/r/x/docs/a.pdf", false, false],
    ["/r/a/b/cache", true, true],
    ["/r/a{b}", false, true],
    ["/r/keep.txt", false, false],
    ["/elsewhere/x.log", false, false],
  ];
  for (const [path, isDir, expected] of cases) {
    test(`${path}${isDir ? "/" : ""} ${expected ? "is" : "is not"} ignored`, () => {
      expect(isIgnored(rules, path, isDir)).toBe(expected);
    });
  }
});

describe("walk", () => {
  test("applies .gitignore files above the root up to the git work tree", async () => {
    const repo = tmp();
    mkdirSync(join(repo, ".git"));
    writeFileSync(join(repo, ".gitignore"), "*.tmp\n");
    mkdirSync(join(repo, "pkg/sub"), { recursive: true });
    writeFileSync(join(repo, "pkg/.gitignore"), "sub/\n");
    writeFileSync(join(repo, "pkg/a.ts"), "");
    writeFileSync(join(repo, "pkg/b.tmp"), "");
    writeFileSync(join(repo, "pkg/sub/c.ts"), "");
    const seen: string[] = [];
    for await (const e of walk(join(repo, "pkg"))) seen.push(e.rel);
    expect(seen).toEqual([".gitignore", "a.ts"]);
  });

  test("stops when aborted", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f"), "");
    const controller = new AbortController();
    controller.abort();
    const it = walk(dir, controller.signal);
    await expect(it.next()).rejects.toThrow();
  });
});
