import { expect, test } from "bun:test";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join, resolve } from "node:path";
import { releaseName } from "../../release.ts";
import { checkBinaryFormat, readBinaryFormat, TARGETS } from "../../scripts/binary-format.ts";
import { describeWith } from "../support/requires.ts";

const RELEASE = resolve(import.meta.dir, "../../dist/release");
/** The first 64 KB of a target's file: every header field the check reads lies there. */
function header(target: string): Uint8Array {
  const fd = openSync(join(RELEASE, releaseName(target)), "r");
  try {
    const buf = new Uint8Array(1 << 16);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
}
const absent = Object.keys(TARGETS).find((t) => !existsSync(join(RELEASE, releaseName(t))));

test("a file in none of the three formats is refused", () => {
  expect(() => readBinaryFormat(new TextEncoder().encode("#!/bin/sh\necho not a binary\n".padEnd(80)))).toThrow(
    "not an ELF, Mach-O or PE executable",
  );
});

describeWith("release binaries' headers", absent && `dist/release/${releaseName(absent)} (bun run build --release)`, () => {
  test("each file is the format, CPU and C library its name says, and SHA256SUMS lists each once", () => {
    const found = Object.fromEntries(Object.keys(TARGETS).map((t) => [t, readBinaryFormat(header(t))]));
    expect(found).toEqual({
      "linux-x64": { format: "elf", arch: "x64", libc: "glibc" },
      "linux-x64-musl": { format: "elf", arch: "x64", libc: "musl" },
      "linux-arm64": { format: "elf", arch: "arm64", libc: "glibc" },
      "darwin-arm64": { format: "macho", arch: "arm64" },
      "darwin-x64": { format: "macho", arch: "x64" },
      "windows-x64": { format: "pe", arch: "x64" },
    });
    const sums = readFileSync(join(RELEASE, "SHA256SUMS"), "utf8").trim().split("\n");
    expect(sums.map((l) => l.split(/\s+/)[1]).sort()).toEqual(Object.keys(TARGETS).map(releaseName).sort());
    expect(sums.every((l) => /^[0-9a-f]{64}  \S+$/.test(l))).toBe(true);
  });

  test("a binary under another target's name is refused, naming both", () => {
    expect(() => checkBinaryFormat(header("linux-arm64"), "linux-x64")).toThrow("linux-x64: the file is elf/arm64/glibc, expected elf/x64/glibc");
    expect(() => checkBinaryFormat(header("linux-x64"), "linux-x64-musl")).toThrow("expected elf/x64/musl");
    expect(() => checkBinaryFormat(header("darwin-x64"), "darwin-arm64")).toThrow("macho/x64");
    expect(() => checkBinaryFormat(header("windows-x64"), "linux-x64")).toThrow("the file is pe/x64");
  });
});
