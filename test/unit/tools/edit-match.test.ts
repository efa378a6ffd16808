import { describe, expect, test } from "bun:test";
import { diffLines, unifiedDiff } from "../../../src/tools/diff.ts";
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

describe("unifiedDiff", () => {
  test("shows a hunk with context and the first changed line", () => {
    const before = Array.from({ length: 10 }, (_, i) => `l${i + 1}`).join("\n");
    const after = before.replace("l5", "five");
    expect(unifiedDiff(before, after, "f.txt")).toEqual({
      diff: ["--- a/f.txt", "+++ b/f.txt", "@@ -2,7 +2,7 @@", " l2", " l3", " l4", "-l5", "+five", " l6", " l7", " l8", ""].join("\n"),
      firstChangedLine: 5,
    });
  });

  test("separate hunks for distant changes, and pure insertions", () => {
    const before = Array.from({ length: 30 }, (_, i) => `l${i + 1}`).join("\n");
    const after = before.replace("l2\n", "l2\nnew\n").replace("l28", "changed");
    const { diff, firstChangedLine } = unifiedDiff(before, after);
    expect(diff.match(/^@@.*$/gm)).toEqual(["@@ -1,5 +1,6 @@", "@@ -25,6 +26,6 @@"]);
    expect(firstChangedLine).toBe(3);
  });

  test("no change, no diff", () => {
    expect(unifiedDiff("a\n", "a\n")).toEqual({ diff: "", firstChangedLine: undefined });
  });

  test("finds a minimal diff inside a changed region", () => {
    const { diff } = unifiedDiff("a\nb\nc\nd\ne\n", "a\nB\nc\nD\ne\n", "f", 0);
    expect(diff).toBe("--- a/f\n+++ b/f\n@@ -2,1 +2,1 @@\n-b\n+B\n@@ -4,1 +4,1 @@\n-d\n+D\n");
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
