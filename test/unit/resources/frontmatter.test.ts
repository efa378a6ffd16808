import { describe, expect, test } from "bun:test";
import { FrontmatterError, parseFrontmatter } from "../../../src/resources/frontmatter.ts";

describe("parseFrontmatter", () => {
  test("text without a block is all body", () => {
    expect(parseFrontmatter("# Title\n\ntext\n")).toEqual({ attributes: {}, body: "# Title\n\ntext\n" });
  });

  test("plain, quoted and commented values", () => {
    const text = [
      "---",
      "name: pdf-tools",
      'description: "Extract \\"text\\": from PDFs"',
      "license: 'It''s MIT'",
      "# a comment",
      "empty-quoted: \"\"",
      "version: 2 # trailing comment",
      "---",
      "Body line",
    ].join("\n");
    expect(parseFrontmatter(text)).toEqual({
      attributes: {
        name: "pdf-tools",
        description: 'Extract "text": from PDFs',
        license: "It's MIT",
        "empty-quoted": "",
        version: "2",
      },
      body: "Body line",
    });
  });

  test("CRLF line endings and a BOM", () => {
    expect(parseFrontmatter("\uFEFF---\r\nname: a\r\n---\r\nbody\r\n")).toEqual({
      attributes: { name: "a" },
      body: "body\n",
    });
  });

  test("folded and literal block scalars, and plain values continued on indented lines", () => {
    const text = [
      "---",
      "description: >",
      "  Folded onto",
      "  one line.",
      "",
      "  Second paragraph.",
      "notes: |-",
      "  line one",
      "    indented",
      "summary: starts here",
      "  and continues",
      "---",
      "",
    ].join("\n");
    expect(parseFrontmatter(text).attributes).toEqual({
      description: "Folded onto one line.\nSecond paragraph.",
      notes: "line one\n  indented",
      summary: "starts here and continues",
    });
  });

  test("nested maps and lists are skipped", () => {
    const text = "---\nmetadata:\n  owner: me\nallowed:\n  - read\nname: x\n---\n";
    expect(parseFrontmatter(text).attributes).toEqual({ name: "x" });
  });

  test("malformed blocks throw FrontmatterError", () => {
    expect(() => parseFrontmatter("---\nname: x\nbody without end")).toThrow(FrontmatterError);
    expect(() => parseFrontmatter("---\njust words\n---\n")).toThrow(/line 2/);
    expect(() => parseFrontmatter('---\nname: "open\n---\n')).toThrow(FrontmatterError);
  });
});
