import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createEditTool } from "../../../src/tools/edit.ts";
import { ToolArgumentError } from "../../../src/tools/tool.ts";
import { createWriteTool } from "../../../src/tools/write.ts";
import { context, run, textOf, tmp } from "./harness.ts";

describe("write", () => {
  const write = createWriteTool();

  test.concurrent("creates parent folders and reports bytes written", async () => {
    const dir = tmp();
    const r = await run(write, { path: "a/b/c.txt", content: "héllo" }, context(dir));
    expect(textOf(r)).toBe("Successfully wrote 6 bytes to a/b/c.txt");
    expect(readFileSync(join(dir, "a/b/c.txt"), "utf8")).toBe("héllo");
  });

  test.concurrent("overwrites an existing file", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f"), "old content that is long");
    await run(write, { path: "f", content: "new" }, context(dir));
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("new");
  });

  test.concurrent("a folder in the way is a clear error", async () => {
    const dir = tmp();
    mkdirSync(join(dir, "d"));
    await expect(run(write, { path: "d", content: "x" }, context(dir))).rejects.toThrow("d is a directory, not a file");
  });

  test("content is required", async () => {
    await expect(write.parse({ path: "f" })).rejects.toThrow('"content"');
  });
});

describe("edit", () => {
  const edit = createEditTool();

  test.concurrent("replaces text and returns a diff", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f.ts"), "const a = 1;\nconst b = 2;\n");
    const r = await run(edit, { path: "f.ts", edits: [{ oldText: "b = 2", newText: "b = 3" }] }, context(dir));
    expect(textOf(r)).toBe("Successfully replaced 1 block of text in f.ts.");
    expect(readFileSync(join(dir, "f.ts"), "utf8")).toBe("const a = 1;\nconst b = 3;\n");
    expect(r.details).toEqual({
      diff: " 1 const a = 1;\n-2 const b = 2;\n+2 const b = 3;",
      patch: "--- f.ts\n+++ f.ts\n@@ -1,2 +1,2 @@\n const a = 1;\n-const b = 2;\n+const b = 3;\n",
      firstChangedLine: 2,
    });
  });

  test.concurrent("several edits in one call", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f"), "a\nb\nc\n");
    const edits = [{ oldText: "a", newText: "A" }, { oldText: "c", newText: "C" }];
    expect(textOf(await run(edit, { path: "f", edits }, context(dir)))).toContain("2 blocks");
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("A\nb\nC\n");
  });

  test.concurrent("accepts the legacy single-edit form", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f"), "x y z");
    expect(await edit.parse({ path: "f", oldText: "y", newText: "Y" })).toEqual({ path: "f", edits: [{ oldText: "y", newText: "Y" }] });
    await run(edit, { path: "f", oldText: "y", newText: "Y" }, context(dir));
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("x Y z");
  });

  test.concurrent("keeps CRLF line endings and a BOM", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "w.txt"), "\ufeffone\r\ntwo\r\n");
    await run(edit, { path: "w.txt", edits: [{ oldText: "one\ntwo", newText: "1\n2" }] }, context(dir));
    expect(readFileSync(join(dir, "w.txt"), "utf8")).toBe("\ufeff1\r\n2\r\n");
  });

  test.concurrent("failures leave the file alone and explain", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f"), "dup\ndup\n");
    const ctx = context(dir);
    await expect(run(edit, { path: "f", edits: [{ oldText: "nope", newText: "x" }] }, ctx)).rejects.toThrow(
      "Edit of f failed: Could not find oldText",
    );
    await expect(run(edit, { path: "f", edits: [{ oldText: "dup", newText: "x" }] }, ctx)).rejects.toThrow("matches 2 places");
    await expect(run(edit, { path: "missing", edits: [{ oldText: "a", newText: "b" }] }, ctx)).rejects.toThrow(
      "File not found: missing",
    );
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("dup\ndup\n");
  });

  test("invalid arguments name the field; the schema shows the edits form", async () => {
    await expect(edit.parse({ path: "f" })).rejects.toThrow(ToolArgumentError);
    await expect(edit.parse({ path: "f", edits: [{ oldText: "a" }] })).rejects.toThrow('"edits.0.newText"');
    await expect(edit.parse({ path: "f", edits: [] })).rejects.toThrow('"edits"');
    await expect(edit.parse({ path: "f", oldText: 1, newText: "b" })).rejects.toThrow('"oldText"');
    expect(edit.parameters).toMatchObject({ required: ["path", "edits"], properties: { edits: { type: "array" } } });
  });
});
