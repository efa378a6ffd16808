import { describe, expect, test } from "bun:test";
import { diffLines, editDiff } from "../../../src/tools/diff.ts";
import { join } from "node:path";
import { describeWith } from "../../support/requires.ts";
import { applyEdits, EditError } from "../../../src/tools/edit-match.ts";

const failure = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(EditError);
    return (err as Error).message;
  }
  throw new Error("expected an EditError");
};

describe("applyEdits", () => {
  test("replaces an exact unique match", () => {
    const r = applyEdits("const a = 1;\nconst b = 2;\n", [{ oldText: "b = 2", newText: "b = 3" }]);
    expect(r).toEqual({ content: "const a = 1;\nconst b = 3;\n", before: "const a = 1;\nconst b = 2;\n", after: "const a = 1;\nconst b = 3;\n" });
  });

  test("applies several edits, each matched against the original", () => {
    const r = applyEdits("one\ntwo\nthree\n", [
      { oldText: "three", newText: "3" },
      { oldText: "one", newText: "two" },
      { oldText: "two\n", newText: "2\n" },
    ]);
    expect(r.content).toBe("two\n2\n3\n");
  });

  test("text not found tells the model to re-read and copy exactly", () => {
    const msg = failure(() => applyEdits("alpha\n", [{ oldText: "beta", newText: "x" }]));
    expect(msg).toContain("Could not find oldText");
    expect(msg).toContain("Read the file again");
  });

  test("names the failing edit when there are several", () => {
    const msg = failure(() =>
      applyEdits("alpha\n", [{ oldText: "alpha", newText: "a" }, { oldText: "beta", newText: "b" }]),
    );
    expect(msg).toContain("edits[1].oldText");
  });

  test("ambiguous text reports the number of matches", () => {
    const msg = failure(() => applyEdits("x = 1\nx = 1\nx = 1\n", [{ oldText: "x = 1", newText: "x = 2" }]));
    expect(msg).toContain("matches 3 places");
    expect(msg).toContain("surrounding lines");
  });

  test("overlapping edits are rejected", () => {
    const msg = failure(() =>
      applyEdits("abcdef\n", [{ oldText: "abcd", newText: "X" }, { oldText: "cdef", newText: "Y" }]),
    );
    expect(msg).toContain("overlap");
  });

  test("adjacent edits are fine", () => {
    expect(applyEdits("abcdef", [{ oldText: "abc", newText: "1" }, { oldText: "def", newText: "2" }]).content).toBe("12");
  });

  test("empty oldText and no-op edits are rejected", () => {
    expect(failure(() => applyEdits("a", [{ oldText: "", newText: "b" }]))).toContain("empty");
    expect(failure(() => applyEdits("a", [{ oldText: "a", newText: "a" }]))).toContain("change nothing");
    expect(failure(() => applyEdits("a", []))).toContain("No edits");
  });

  test("a CRLF file edited with LF text keeps CRLF everywhere", () => {
    const r = applyEdits("one\r\ntwo\r\nthree\r\n", [{ oldText: "one\ntwo\n", newText: "1\n2\n" }]);
    expect(r.content).toBe("1\r\n2\r\nthree\r\n");
    expect(r.after).toBe("1\n2\nthree\n");
  });

  test("an exact match in a CRLF file converts newText to CRLF", () => {
    expect(applyEdits("a\r\nb\r\n", [{ oldText: "b", newText: "b\nc" }]).content).toBe("a\r\nb\r\nc\r\n");
  });

  test("keeps a BOM", () => {
    expect(applyEdits("\ufeffhello\n", [{ oldText: "hello", newText: "bye" }]).content).toBe("\ufeffbye\n");
  });

  test("falls back to ignoring trailing whitespace", () => {
    const r = applyEdits("if (x) {   \n  go();\t\n}\n", [{ oldText: "if (x) {\n  go();\n}", newText: "if (y) {\n  stop();\n}" }]);
    expect(r.content).toBe("if (y) {\n  stop();\n}\n");
  });

  test("falls back to plain quotes, dashes and spaces", () => {
    const r = applyEdits("say(\u201chi\u201d) \u2014 it\u2019s\u00a0fine\n", [{ oldText: `say("hi") - it's fine`, newText: "ok" }]);
    expect(r.content).toBe("ok\n");
  });

  test("prefers an exact match over the forgiving one", () => {
    // Ignoring trailing whitespace, "a" followed by a newline would occur twice.
    expect(applyEdits("a \nb\na\nb\n", [{ oldText: "a\nb", newText: "X" }]).content).toBe("a \nb\nX\n");
  });

  test("the forgiving match also rejects ambiguity", () => {
    expect(failure(() => applyEdits("a \nb\na\t\nb\n", [{ oldText: "a\nb", newText: "X" }]))).toContain("matches 2 places");
  });
});

describe("editDiff (the reference's display diff and unified patch)", () => {
  // Each expectation is what the reference's edit-diff produced for the same input.
  test("one changed line", () => {
    expect(editDiff("a\nb\nc\n", "a\nB\nc\n", "f.txt")).toEqual({
      diff: " 1 a\n-2 b\n+2 B\n 3 c",
      patch: "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
      firstChangedLine: 2,
    });
  });
  test("no newline at the end of the file", () => {
    expect(editDiff("one\ntwo\nthree", "one\n2\nthree", "f.txt").patch).toBe(
      "--- f.txt\n+++ f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n\\ No newline at end of file\n",
    );
    expect(editDiff("a\nb", "a\nb\nc", "f.txt")).toEqual({
      diff: " 1 a\n-2 b\n+2 b\n+3 c",
      patch: "--- f.txt\n+++ f.txt\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n\\ No newline at end of file\n",
      firstChangedLine: 2,
    });
  });
  test("from and to an empty file", () => {
    expect(editDiff("", "new\n", "f.txt")).toEqual({ diff: "+1 new", patch: "--- f.txt\n+++ f.txt\n@@ -0,0 +1,1 @@\n+new\n", firstChangedLine: 1 });
    expect(editDiff("x\n", "", "f.txt")).toEqual({ diff: "-1 x", patch: "--- f.txt\n+++ f.txt\n@@ -1,1 +0,0 @@\n-x\n", firstChangedLine: 1 });
  });
  test("distant changes: skipped lines marked, separate hunks, numbers padded", () => {
    const before = Array.from({ length: 30 }, (_, i) => `l${i + 1}\n`).join("");
    const after = before.replace("l3\n", "L3\n").replace("l26\n", "L26\n");
    const d = editDiff(before, after, "f.txt");
    expect(d.diff).toBe(
      ["  1 l1", "  2 l2", "- 3 l3", "+ 3 L3", "  4 l4", "  5 l5", "  6 l6", "  7 l7", "    ...", " 22 l22", " 23 l23", " 24 l24", " 25 l25", "-26 l26", "+26 L26", " 27 l27", " 28 l28", " 29 l29", " 30 l30"].join("\n"),
    );
    expect(d.patch.match(/^@@.*$/gm)).toEqual(["@@ -1,7 +1,7 @@", "@@ -22,9 +22,9 @@"]);
    expect(d.firstChangedLine).toBe(3);
  });
  test("no change, no diff", () => {
    expect(editDiff("a\n", "a\n")).toEqual({ diff: "", patch: "", firstChangedLine: undefined });
  });
});

const REFERENCE = process.env.PION_REFERENCE_PKG;
describeWith("editDiff equals the reference's on random edits", REFERENCE ? undefined : "PION_REFERENCE_PKG (the reference package)", () => {
  test("500 random files and edits", async () => {
    const ref = await import(join(REFERENCE!, "dist/core/tools/edit-diff.js"));
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 500; round++) {
      const lines = Array.from({ length: rand(40) }, () => `line ${rand(6)}`);
      const before = lines.join("\n") + (rand(2) ? "\n" : "");
      const changed = lines.map((l) => (rand(8) === 0 ? `${l} edited` : l)).filter(() => rand(12) !== 0);
      if (rand(3) === 0) changed.splice(rand(changed.length + 1), 0, "inserted");
      const after = changed.join("\n") + (rand(2) ? "\n" : "");
      if (before === after) continue;
      const mine = editDiff(before, after, "f.txt");
      const theirs = ref.generateDiffString(before, after);
      expect(mine.diff).toBe(theirs.diff);
      expect(mine.firstChangedLine).toBe(theirs.firstChangedLine);
      expect(mine.patch).toBe(ref.generateUnifiedPatch("f.txt", before, after));
    }
  });
});

describe("diffLines", () => {
  test("replays to both sides on random inputs", () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const a = Array.from({ length: rand(30) }, () => "abcde"[rand(5)]);
      const b = Array.from({ length: rand(30) }, () => "abcde"[rand(5)]);
      const ops = diffLines(a, b);
      expect(ops.filter((o) => o.kind !== "+").map((o) => o.line)).toEqual(a);
      expect(ops.filter((o) => o.kind !== "-").map((o) => o.line)).toEqual(b);
    }
  });
});
