import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createFindTool } from "../../../src/tools/find.ts";
import { createGrepTool } from "../../../src/tools/grep.ts";
import { createLsTool } from "../../../src/tools/ls.ts";
import { context, run, textOf, tmp } from "./harness.ts";

function tree(files: Record<string, string>): string {
  const dir = tmp();
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

const project = () =>
  tree({
    ".gitignore": "dist/\n*.log\n!keep.log\n/rootonly.ts\n",
    "src/a.ts": "export const needle = 1;\nconst other = 2;\n",
    "src/b.md": "a Needle in docs\n",
    "src/deep/c.ts": "// needle again\n",
    "src/deep/.gitignore": "secret.ts\n",
    "src/deep/secret.ts": "needle hidden\n",
    "src/rootonly.ts": "needle kept: only /rootonly.ts at the root is ignored\n",
    "rootonly.ts": "needle ignored\n",
    "dist/out.js": "needle built\n",
    "debug.log": "needle log\n",
    "keep.log": "needle kept log\n",
    "node_modules/pkg/index.js": "needle dep\n",
    ".git/config": "needle git\n",
    ".env": "NEEDLE=(1)\n",
  });

describe("grep", () => {
  const grep = createGrepTool();

  test.concurrent("finds matches, honouring .gitignore and skipping .git and node_modules", async () => {
    const dir = project();
    const text = textOf(await run(grep, { pattern: "needle" }, context(dir)));
    expect(text.split("\n")).toEqual([
      "keep.log:1: needle kept log",
      "src/a.ts:1: export const needle = 1;",
      "src/deep/c.ts:1: // needle again",
      "src/rootonly.ts:1: needle kept: only /rootonly.ts at the root is ignored",
    ]);
  });

  test.concurrent("ignoreCase, literal, glob and a sub-path", async () => {
    const dir = project();
    const ctx = context(dir);
    expect(textOf(await run(grep, { pattern: "needle", ignoreCase: true, glob: "*.md" }, ctx))).toBe("src/b.md:1: a Needle in docs");
    expect(textOf(await run(grep, { pattern: "=(1", literal: true }, ctx))).toBe(".env:1: NEEDLE=(1)");
    expect(textOf(await run(grep, { pattern: "needle", path: "src/deep" }, ctx))).toBe("c.ts:1: // needle again");
    expect(textOf(await run(grep, { pattern: "needle", glob: "src/*.ts" }, ctx)).split("\n")).toEqual([
      "src/a.ts:1: export const needle = 1;",
      "src/rootonly.ts:1: needle kept: only /rootonly.ts at the root is ignored",
    ]);
    expect(textOf(await run(grep, { pattern: "needle", path: "src/a.ts" }, ctx))).toBe("a.ts:1: export const needle = 1;");
  });

  test.concurrent("context lines and match limit", async () => {
    const dir = tree({ "f.txt": "a\nhit 1\nb\nc\nd\ne\nhit 2\nf\nhit 3\n" });
    const ctx = context(dir);
    expect(textOf(await run(grep, { pattern: "hit", context: 1, limit: 2 }, ctx))).toBe(
      [
        "f.txt-1- a",
        "f.txt:2: hit 1",
        "f.txt-3- b",
        "--",
        "f.txt-6- e",
        "f.txt:7: hit 2",
        "f.txt-8- f",
        "",
        "[2 matches limit reached. Use limit=4 for more, or refine the pattern.]",
      ].join("\n"),
    );
  });

  test.concurrent("long lines are cut, binary files skipped", async () => {
    const dir = tree({ "min.js": `x${"y".repeat(1000)}hit\n`, "bin.dat": "hit\u0000\n" });
    const r = await run(grep, { pattern: "hit" }, context(dir));
    expect(textOf(r)).toStartWith(`min.js:1: x${"y".repeat(499)}... [line truncated, 504 more characters]`);
    expect(textOf(r)).toContain("Lines longer than 500 characters were cut");
    expect(textOf(r)).not.toContain("bin.dat");
  });

  test.concurrent("no matches, bad regex, missing path", async () => {
    const dir = tree({ "f": "text\n" });
    const ctx = context(dir);
    expect(textOf(await run(grep, { pattern: "absent" }, ctx))).toBe("No matches found");
    await expect(run(grep, { pattern: "(" }, ctx)).rejects.toThrow("Invalid regular expression");
    await expect(run(grep, { pattern: "x", path: "nope" }, ctx)).rejects.toThrow("File not found: nope");
  });
});

describe("find", () => {
  const find = createFindTool();

  test.concurrent("matches names at any depth, honouring .gitignore, sorted", async () => {
    const dir = project();
    const text = textOf(await run(find, { pattern: "*.ts" }, context(dir)));
    expect(text.split("\n")).toEqual(["src/a.ts", "src/deep/c.ts", "src/rootonly.ts"]);
  });

  test.concurrent("a pattern with / matches the relative path; folders end with /", async () => {
    const dir = project();
    const ctx = context(dir);
    expect(textOf(await run(find, { pattern: "src/*" }, ctx)).split("\n")).toEqual(["src/a.ts", "src/b.md", "src/deep/", "src/rootonly.ts"]);
    expect(textOf(await run(find, { pattern: "**/c.ts", path: "src" }, ctx))).toBe("deep/c.ts");
  });

  test.concurrent("limit and no results", async () => {
    const dir = tree({ "a.txt": "", "b.txt": "", "c.txt": "" });
    const ctx = context(dir);
    expect(textOf(await run(find, { pattern: "*.txt", limit: 2 }, ctx))).toBe(
      "a.txt\nb.txt\n\n[2 results limit reached. Use limit=4 for more, or refine the pattern.]",
    );
    expect(textOf(await run(find, { pattern: "*.rs" }, ctx))).toBe("No files found matching pattern");
    await expect(run(find, { pattern: "*", path: "a.txt" }, ctx)).rejects.toThrow("a.txt is not a directory");
  });
});

describe("ls", () => {
  const ls = createLsTool();

  test.concurrent("lists sorted entries with dotfiles and folder slashes", async () => {
    const dir = tree({ "b.txt": "", "A.md": "", ".hidden": "", "sub/x": "", "node_modules/y": "" });
    expect(textOf(await run(ls, {}, context(dir)))).toBe(".hidden\nA.md\nb.txt\nnode_modules/\nsub/");
    expect(textOf(await run(ls, { path: "sub" }, context(dir)))).toBe("x");
  });

  test.concurrent("limit, empty folders and errors", async () => {
    const dir = tree({ "a": "", "b": "", "c": "", "e/.keep": "" });
    const ctx = context(dir);
    expect(textOf(await run(ls, { limit: 2 }, ctx))).toBe("a\nb\n\n[2 of 4 entries shown. Use limit=4 to see all.]");
    mkdirSync(join(dir, "empty"));
    expect(textOf(await run(ls, { path: "empty" }, ctx))).toBe("(empty directory)");
    await expect(run(ls, { path: "a" }, ctx)).rejects.toThrow("a is not a directory");
    await expect(run(ls, { path: "zzz" }, ctx)).rejects.toThrow("File not found: zzz");
  });
});
