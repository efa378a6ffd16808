import { describe, expect, test } from "bun:test";
import { parseLooseJson } from "../../../src/util/jsonc.ts";

describe("parseLooseJson", () => {
  test("line comments, trailing commas and a BOM are allowed; strings are left alone", () => {
    const text = '\uFEFF{\n  // a comment\n  "url": "http://h//x", // trailing\n  "list": [1, 2,],\n  "s": "a, ]\\" // not a comment",\n}\n';
    expect(parseLooseJson(text)).toEqual({ url: "http://h//x", list: [1, 2], s: 'a, ]" // not a comment' });
  });

  test("anything else is still an error", () => {
    expect(() => parseLooseJson("{nope")).toThrow();
    expect(() => parseLooseJson('{"a": 1 /* block */}')).toThrow();
  });
});
