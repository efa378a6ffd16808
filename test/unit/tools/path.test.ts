import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { fsErrorMessage, resolveToolPath } from "../../../src/tools/path.ts";

const fsError = (code: string) => Object.assign(new Error(`${code}: raw`), { code });

describe("resolveToolPath", () => {
  test("relative, absolute, ~ and @ forms", () => {
    expect(resolveToolPath("a/b.ts", "/work")).toBe("/work/a/b.ts");
    expect(resolveToolPath("../x", "/work/sub")).toBe("/work/x");
    expect(resolveToolPath("/etc/hosts", "/work")).toBe("/etc/hosts");
    expect(resolveToolPath("~", "/work")).toBe(homedir());
    expect(resolveToolPath("~/notes.md", "/work")).toBe(`${homedir()}/notes.md`);
    expect(resolveToolPath("@src/a.ts", "/work")).toBe("/work/src/a.ts");
  });
});

describe("fsErrorMessage", () => {
  test("rephrases common errno codes for the model", () => {
    expect(fsErrorMessage(fsError("ENOENT"), "a.txt")).toBe("File not found: a.txt");
    expect(fsErrorMessage(fsError("EACCES"), "a.txt")).toBe("Permission denied: a.txt");
    expect(fsErrorMessage(fsError("EPERM"), "a.txt")).toBe("Permission denied: a.txt");
    expect(fsErrorMessage(fsError("EISDIR"), "d")).toBe("d is a directory, not a file");
    expect(fsErrorMessage(fsError("EIO"), "a")).toBe("EIO: raw (a)");
  });
});
