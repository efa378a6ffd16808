import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { globToRegExp } from "../../../src/permissions/glob.ts";
import { allowedByRules, alwaysRulesFor, parseRule, ruleMatches } from "../../../src/permissions/rules.ts";
import { subjectOf } from "../../../src/permissions/subject.ts";

describe("globToRegExp", () => {
  test("* stays in one segment for paths, ** crosses them, a/**/b also matches a/b", () => {
    const re = globToRegExp("/p/src/*.ts", true);
    expect(re.test("/p/src/a.ts")).toBe(true);
    expect(re.test("/p/src/x/a.ts")).toBe(false);
    expect(globToRegExp("/p/src/**", true).test("/p/src/x/y/z.ts")).toBe(true);
    expect(globToRegExp("/p/src/**", true).test("/p/other/z.ts")).toBe(false);
    const mid = globToRegExp("/p/a/**/b", true);
    expect(["/p/a/b", "/p/a/x/b", "/p/a/x/y/b"].map((s) => mid.test(s))).toEqual([true, true, true]);
    expect(mid.test("/p/ab")).toBe(false);
  });

  test("for commands * matches anything; regex characters and escaped * are literal", () => {
    expect(globToRegExp("git status*", false).test("git status --short ./a/b")).toBe(true);
    expect(globToRegExp("git status*", false).test("git stash")).toBe(false);
    expect(globToRegExp("ls \\*.ts", false).test("ls *.ts")).toBe(true);
    expect(globToRegExp("ls \\*.ts", false).test("ls a.ts")).toBe(false);
    expect(globToRegExp("a.(b)+[c]", false).test("a.(b)+[c]")).toBe(true);
    expect(globToRegExp("a.(b)+[c]", false).test("aX(b)+[c]")).toBe(false);
  });
});

describe("rules", () => {
  const cwd = "/work/proj";

  test("parse: a name or glob, optionally with a pattern; anything else is a one-line error", () => {
    expect(parseRule("allow", "bash(git status*)", "settings")).toMatchObject({ kind: "allow", text: "bash(git status*)", pattern: "git status*" });
    expect(parseRule("deny", "mcp__github__*", "command line").pattern).toBeUndefined();
    expect(parseRule("deny", "bash(echo (x))", "settings").pattern).toBe("echo (x)");
    for (const bad of ["", "bash(", "bash()", "(x)", "two words"]) {
      expect(() => parseRule("allow", bad, "settings")).toThrow(/Invalid permission rule/);
    }
  });

  test("tool-name globs; a pattern needs a subject", () => {
    const r = parseRule("deny", "mcp__github__*", "settings");
    expect(ruleMatches(r, "mcp__github__create_issue", undefined, cwd)).toBe(true);
    expect(ruleMatches(r, "mcp__gitlab__x", undefined, cwd)).toBe(false);
    expect(ruleMatches(parseRule("deny", "poke(x)", "settings"), "poke", undefined, cwd)).toBe(false);
  });

  test("deny matches a compound command when any part does; allow only when every part does", async () => {
    const deny = parseRule("deny", "bash(rm *)", "settings");
    const sub = (command: string) => subjectOf("bash", { command }, cwd);
    expect(ruleMatches(deny, "bash", await sub("ls && rm -rf x"), cwd)).toBe(true);
    expect(ruleMatches(deny, "bash", await sub("echo $(rm x)"), cwd)).toBe(true);
    expect(ruleMatches(deny, "bash", await sub("echo rm"), cwd)).toBe(false);
    const allows = [parseRule("allow", "bash(git *)", "settings"), parseRule("allow", "bash(grep *)", "settings")];
    expect(allowedByRules(allows, "bash", await sub("git log | grep fix"), cwd)?.text).toBe("bash(git *)");
    expect(allowedByRules(allows, "bash", await sub("git log | sh"), cwd)).toBeUndefined();
    expect(allowedByRules(allows, "bash", await sub("git log $(curl evil)"), cwd)).toBeUndefined();
    expect(allowedByRules(allows, "bash", await sub(`git commit -m "unclosed`), cwd)).toBeUndefined();
    expect(allowedByRules([parseRule("allow", "bash", "settings")], "bash", await sub("anything; at all"), cwd)?.text).toBe("bash");
  });

  test("path patterns: relative to the cwd, ~ is the home folder, symlinks resolved", async () => {
    expect(await subjectOf("ls", {}, cwd)).toEqual({ kind: "path", paths: [cwd] });
    expect(await subjectOf("poke", {}, cwd)).toBeUndefined();
    const edit = parseRule("deny", "edit(src/**)", "settings");
    expect(ruleMatches(edit, "edit", await subjectOf("edit", { path: "src/a/b.ts" }, cwd), cwd)).toBe(true);
    expect(ruleMatches(edit, "edit", await subjectOf("edit", { path: "/work/proj/src/c.ts" }, cwd), cwd)).toBe(true);
    expect(ruleMatches(edit, "edit", await subjectOf("edit", { path: "lib/c.ts" }, cwd), cwd)).toBe(false);
    const ssh = parseRule("deny", "read(~/.ssh/**)", "settings");
    expect(ruleMatches(ssh, "read", await subjectOf("read", { path: join(homedir(), ".ssh/id_rsa") }, cwd), cwd)).toBe(true);

    const root = mkdtempSync(join(tmpdir(), "pion-perm-"));
    mkdirSync(join(root, "secret"));
    writeFileSync(join(root, "secret", "key"), "k");
    mkdirSync(join(root, "proj"));
    symlinkSync(join(root, "secret"), join(root, "proj", "link"));
    const proj = join(root, "proj");
    const viaLink = await subjectOf("read", { path: "link/key" }, proj);
    expect(ruleMatches(parseRule("deny", `read(${root}/secret/**)`, "settings"), "read", viaLink, proj)).toBe(true);
    // an allow for the link's folder does not cover the file it points outside of
    expect(allowedByRules([parseRule("allow", "read(link/**)", "settings")], "read", viaLink, proj)).toBeUndefined();
    expect(allowedByRules([parseRule("allow", "read(**)", "settings"), parseRule("allow", `read(${root}/**)`, "settings")], "read", viaLink, proj)).toBeDefined();
  });

  test("allow_always rules are exact: one per command of a line, glob characters escaped", async () => {
    const always = async (toolName: string, args: Record<string, unknown>, at = cwd) => alwaysRulesFor(toolName, args, await subjectOf(toolName, args, at));
    expect(await always("bash", { command: "git status && ls *.ts" })).toEqual(["bash(git status)", "bash(ls \\*.ts)"]);
    expect(await always("bash", { command: "/usr/bin/env FOO=1 timeout 5 make -j4 > /x/out.log" })).toEqual(["bash(make -j4)", "write(/x/out.log)"]);
    expect(await always("bash", { command: "eval ls" })).toEqual([]);
    expect(await always("edit", { path: "src/a?.ts" })).toEqual(["edit(src/a\\?.ts)"]);
    expect(await always("poke", { n: 1 })).toEqual(["poke"]);
    const cwd2 = "/x";
    const rules = (await always("bash", { command: "ls *.ts | wc -l" }, cwd2)).map((t) => parseRule("allow", t, "session"));
    expect(allowedByRules(rules, "bash", await subjectOf("bash", { command: "ls *.ts | wc -l" }, cwd2), cwd2)).toBeDefined();
    expect(allowedByRules(rules, "bash", await subjectOf("bash", { command: "ls a.ts | wc -l" }, cwd2), cwd2)).toBeUndefined();
  });
});
