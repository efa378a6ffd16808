import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  expandPromptTemplate,
  loadPromptTemplates,
  type PromptTemplate,
  splitArgs,
  substituteArgs,
} from "../../../src/resources/prompt-templates.ts";
import { roots, writeTree } from "./helpers.ts";

describe("loadPromptTemplates", () => {
  test.concurrent("reads user and project templates; description from front matter or the first line", () => {
    const r = roots();
    writeTree(r.home, {
      "prompts/review.md": "---\ndescription: Review staged changes\n---\nReview the diff. Focus on $1.\n",
      "prompts/notes.txt": "not a template",
      "prompts/nested/deep.md": "not a direct child",
    });
    writeTree(r.cwd, { ".pion/prompts/fix-tests.md": "\n\n  Fix the failing tests in $@.  \n\nThen run them.\n" });
    expect(loadPromptTemplates(r)).toEqual({
      templates: [
        {
          name: "fix-tests",
          description: "Fix the failing tests in $@.",
          content: "  Fix the failing tests in $@.  \n\nThen run them.",
          filePath: join(r.cwd, ".pion/prompts/fix-tests.md"),
          location: "project",
          found: { source: "auto", scope: "project", origin: "top-level", baseDir: join(r.cwd, ".pion") },
        },
        {
          name: "review",
          description: "Review staged changes",
          content: "Review the diff. Focus on $1.",
          filePath: join(r.home, "prompts/review.md"),
          location: "user",
          found: { source: "auto", scope: "user", origin: "top-level", baseDir: r.home },
        },
      ],
      warnings: [],
    });
  });

  test.concurrent("a project template replaces the user's of the same name", () => {
    const r = roots();
    writeTree(r.home, { "prompts/review.md": "User review" });
    writeTree(r.cwd, { ".pion/prompts/review.md": "Project review" });
    const { templates } = loadPromptTemplates(r);
    expect(templates.map((t) => [t.name, t.content, t.location])).toEqual([["review", "Project review", "project"]]);
  });

  test.concurrent("a template with broken front matter is skipped with a warning", () => {
    const r = roots();
    writeTree(r.home, { "prompts/bad.md": "---\ndescription: x\n", "prompts/good.md": "Good" });
    const { templates, warnings } = loadPromptTemplates(r);
    expect(templates.map((t) => t.name)).toEqual(["good"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toStartWith(`Skipping prompt template ${join(r.home, "prompts/bad.md")}:`);
  });

  test.concurrent("no folders, no templates", () => {
    expect(loadPromptTemplates(roots())).toEqual({ templates: [], warnings: [] });
  });
});

describe("splitArgs", () => {
  test.each([
    ["", []],
    ["  a   b\tc\n d ", ["a", "b", "c", "d"]],
    ['"API compatibility" next', ["API compatibility", "next"]],
    ["'single quoted' x", ["single quoted", "x"]],
    ["doesn't matter", ["doesn't", "matter"]],
    ['"unclosed quote', ['"unclosed', "quote"]],
    ['"the \\"fast\\" path"', ['the "fast" path']],
    ['"keep \\n backslash"', ["keep \\n backslash"]],
    ['"" empty', ["", "empty"]],
    ['"joined"tail', ["joinedtail"]],
  ])("%p", (input, expected) => {
    expect(splitArgs(input)).toEqual(expected);
  });
});

describe("substituteArgs", () => {
  const args = ["one", "two words", "three"];
  test.each([
    ["$1 and $2 and $3", "one and two words and three"],
    ["[$4]", "[]"],
    ["all: $@ / $ARGUMENTS", "all: one two words three / one two words three"],
    ["${1:-dflt} ${5:-dflt} ${@:-none}", "one dflt one two words three"],
    ["${@:2}|${@:1:2}|${@:3:5}", "two words three|one two words|three"],
    ["$0 and $$ stay", "$0 and $$ stay"],
  ])("%p", (template, expected) => {
    expect(substituteArgs(template, args)).toBe(expected);
  });

  test("argument text is not substituted again", () => {
    expect(substituteArgs("$1 $2", ["$2", "x"])).toBe("$2 x");
  });

  test("defaults apply when there are no arguments", () => {
    expect(substituteArgs("Focus on ${1:-correctness}. ${@:-Nothing else.}", [])).toBe("Focus on correctness. Nothing else.");
  });
});

describe("expandPromptTemplate", () => {
  const templates: PromptTemplate[] = [
    { name: "review", description: "", content: "Review $1 for $2. All: $ARGUMENTS", filePath: "/p/review.md", location: "user", found: { source: "auto", scope: "user", origin: "top-level" } },
  ];

  test("expands a known template with quoted arguments", () => {
    expect(expandPromptTemplate('/review src/a.ts "API compatibility"', templates)).toBe(
      "Review src/a.ts for API compatibility. All: src/a.ts API compatibility",
    );
  });

  test("expands without arguments", () => {
    expect(expandPromptTemplate("/review", templates)).toBe("Review  for . All: ");
  });

  test("leaves everything else unchanged", () => {
    for (const text of ["/nope x", "review x", " /review x", "/review/x", "/skill:review"]) {
      expect(expandPromptTemplate(text, templates)).toBe(text);
    }
  });
});

describe("loadPromptTemplates with explicit paths (--prompt-template, --no-prompt-templates)", () => {
  test.concurrent("a .md file or a folder of them, loaded after the discovered templates (which win a name), as in the reference; noDiscovery skips the folders", () => {
    const r = roots();
    writeTree(r.home, { "prompts/fix.md": "Discovered fix", "prompts/other.md": "Other" });
    writeTree(r.cwd, { "t/fix.md": "Explicit fix", "t/new.md": "New one", "single.md": "Single", "notes.txt": "no" });
    const loaded = loadPromptTemplates(r, { paths: ["t", "single.md", "notes.txt", "missing.md"] });
    expect(loaded.templates.map((t) => [t.name, t.location, t.content])).toEqual([
      ["fix", "user", "Discovered fix"],
      ["other", "user", "Other"],
      ["new", "path", "New one"],
      ["single", "path", "Single"],
    ]);
    expect(loaded.templates[2]!.found).toEqual({ source: "local", scope: "temporary", origin: "top-level", baseDir: join(r.cwd, "t") });
    expect(loaded.warnings).toEqual([
      `Prompt template "fix" at ${join(r.cwd, "t/fix.md")} is left out: the one at ${join(r.home, "prompts/fix.md")} has that name and loaded first`,
      `Skipping prompt template ${join(r.cwd, "notes.txt")}: not a .md file`,
      `Prompt template path not found: ${join(r.cwd, "missing.md")}`,
    ]);
    expect(loadPromptTemplates(r, { noDiscovery: true, paths: ["single.md"] }).templates.map((t) => t.name)).toEqual(["single"]);
  });
});
