import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createReadTool, withReadOutput } from "../../../src/tools/read.ts";
import { ToolArgumentError } from "../../../src/tools/tool.ts";
import { formatSize } from "../../../src/tools/truncate.ts";
import { context, run, textOf, tmp } from "./harness.ts";

// A 1x1 PNG (images are decoded to check their size).
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const CHILD = join(import.meta.dir, "read-child.ts");

/**
 * The read tool in a child process, with another home folder, or (`asUnprivileged`) without
 * root's power to read any file: its bounding set loses CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, so file modes apply to it as to any user (it can still read the repo).
 */
function readInChild(cwd: string, path: string, opts: { asUnprivileged?: boolean; env?: Record<string, string> } = {}): { text?: string; error?: string } {
  const drop = opts.asUnprivileged ? [SETPRIV!, "--bounding-set=-dac_override,-dac_read_search"] : [];
  const r = spawnSync(drop[0] ?? process.execPath, [...drop.slice(1), ...(drop.length ? [process.execPath] : []), CHILD, cwd, path], {
    encoding: "utf8",
    env: { ...process.env, ...opts.env },
  });
  if (r.status !== 0) throw new Error(`read-child exited with ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}
const SETPRIV = Bun.which("setpriv");

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n");

describe("read", () => {
  const read = createReadTool();

  test.concurrent("returns a small text file as it is", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "a.txt"), "hello\nworld\n");
    const r = await run(read, { path: "a.txt" }, context(dir));
    expect(r.content).toEqual([{ type: "text", text: "hello\nworld" }]);
    expect(r.isError).toBeFalsy();
  });

  test.concurrent("offset and limit select lines and say how to continue", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "a.txt"), numbered(10));
    expect(textOf(await run(read, { path: "a.txt", offset: 3, limit: 2 }, context(dir)))).toBe(
      "line 3\nline 4\n\n[6 more lines in the file. Use offset=5 to continue.]",
    );
    expect(textOf(await run(read, { path: "a.txt", offset: 9 }, context(dir)))).toBe("line 9\nline 10");
  });

  test.concurrent("long files stop at 2000 lines with a note", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "big.txt"), `${numbered(5000)}\n`);
    const text = textOf(await run(read, { path: "big.txt" }, context(dir)));
    expect(text.endsWith("line 2000\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]")).toBe(true);
    const next = textOf(await run(read, { path: "big.txt", offset: 2001 }, context(dir)));
    expect(next.startsWith("line 2001\n")).toBe(true);
    expect(next).toContain("[Showing lines 2001-4000 of 5000. Use offset=4001 to continue.]");
  });

  test.concurrent("wide files stop at 50KB", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "wide.txt"), Array.from({ length: 100 }, () => "x".repeat(1000)).join("\n"));
    const r = await run(read, { path: "wide.txt" }, context(dir));
    expect(textOf(r)).toContain("[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]");
    expect(r.details).toMatchObject({ truncation: { truncatedBy: "bytes", outputLines: 51 } });
  });

  test.concurrent("lines longer than 2000 characters are cut", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "min.js"), `a\n${"y".repeat(5000)}\nb\n`);
    const text = textOf(await run(read, { path: "min.js" }, context(dir)));
    expect(text).toBe(`a\n${"y".repeat(2000)}... [line truncated, 3000 more characters]\nb`);
  });

  test.concurrent("CRLF is shown as LF; empty files say so", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "crlf.txt"), "a\r\nb\r\n");
    writeFileSync(join(dir, "empty.txt"), "");
    expect(textOf(await run(read, { path: "crlf.txt" }, context(dir)))).toBe("a\nb");
    expect(textOf(await run(read, { path: "empty.txt" }, context(dir)))).toBe("(empty file)");
  });

  test.concurrent("accepts absolute paths, an @ prefix and ~", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "a.txt"), "hi");
    expect(textOf(await run(read, { path: "@a.txt" }, context(dir)))).toBe("hi");
    expect(textOf(await run(read, { path: join(dir, "a.txt") }, context("/")))).toBe("hi");
    // ~ is the home folder: a child process whose HOME is this folder, wherever temp folders live.
    expect(readInChild("/", "~/a.txt", { env: { HOME: dir } })).toEqual({ text: "hi" });
    expect(readInChild("/", "~/a.txt", { env: { HOME: tmp() } }).error).toBe("File not found: ~/a.txt");
  });

  test.concurrent("clear errors", async () => {
    const dir = tmp();
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "bin"), Uint8Array.from([1, 2, 0, 3]));
    writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
    const ctx = context(dir);
    await expect(run(read, { path: "nope.txt" }, ctx)).rejects.toThrow("File not found: nope.txt");
    await expect(run(read, { path: "sub" }, ctx)).rejects.toThrow("sub is a directory, not a file");
    await expect(run(read, { path: "bin" }, ctx)).rejects.toThrow("binary file");
    await expect(run(read, { path: "a.txt", offset: 3 }, ctx)).rejects.toThrow("Offset 3 is beyond the end of a.txt, which has 2 lines");
  });

  test.concurrent("permission denied", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "open"), "x");
    writeFileSync(join(dir, "secret"), "x");
    chmodSync(join(dir, "secret"), 0o000);
    if (process.getuid?.() !== 0) {
      await expect(run(read, { path: "secret" }, context(dir))).rejects.toThrow("Permission denied: secret");
      return;
    }
    // root reads any file: the read runs in a child process that has lost that power.
    if (!SETPRIV) throw new Error("running as root, this test needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE");
    expect(readInChild(dir, "open", { asUnprivileged: true })).toEqual({ text: "x" });
    expect(readInChild(dir, "secret", { asUnprivileged: true })).toEqual({ error: "Permission denied: secret" });
  });

  test.concurrent("images come back as image content, or as a note when the model cannot see them", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "pic.bin"), PNG);
    const r = await run(read, { path: "pic.bin" }, context(dir));
    expect(r.content[1]).toEqual({ type: "image", mimeType: "image/png", data: Buffer.from(PNG).toString("base64") });
    expect(textOf(r)).toContain("image/png");
    const blind = await run(createReadTool({ images: false }), { path: "pic.bin" }, context(dir));
    expect(blind.content).toHaveLength(1);
    expect(textOf(blind)).toContain("does not support images");
    // structuredContent: the image with its note; the note alone when it cannot be shown
    expect(r.structuredContent).toEqual({ type: "image", data: Buffer.from(PNG).toString("base64"), mimeType: "image/png", note: textOf(r) });
    expect(blind.structuredContent).toBe(textOf(blind));
  });

  test("an image over 2000 pixels is scaled down and the note says so; autoResizeImages: false sends it as it is", async () => {
    const { loadPhoton } = await import("../../../src/tools/images/photon.ts");
    const photon = (await loadPhoton())!;
    const raw = new photon.PhotonImage(new Uint8Array(3000 * 20 * 4).fill(200), 3000, 20);
    const wide = raw.get_bytes();
    raw.free();
    const dir = tmp();
    writeFileSync(join(dir, "wide.png"), wide);
    const r = await run(read, { path: "wide.png" }, context(dir));
    expect(textOf(r)).toBe(`Read image wide.png (image/png, ${formatSize(wide.length)})\n[Image: original 3000x20, displayed at 2000x13. Multiply coordinates by 1.50 to map to original image.]`);
    const sent = photon.PhotonImage.new_from_byteslice(Buffer.from((r.content[1] as { data: string }).data, "base64"));
    expect([sent.get_width(), sent.get_height()]).toEqual([2000, 13]);
    sent.free();
    const asIs = await run(createReadTool({ autoResizeImages: false }), { path: "wide.png" }, context(dir));
    expect(asIs.content).toEqual([{ type: "text", text: `Read image wide.png (image/png, ${formatSize(wide.length)})` }, { type: "image", mimeType: "image/png", data: Buffer.from(wide).toString("base64") }]);
    // a small image is sent unchanged, with no note
    writeFileSync(join(dir, "dot.png"), PNG);
    expect((await run(read, { path: "dot.png" }, context(dir))).content).toEqual([{ type: "text", text: `Read image dot.png (image/png, ${formatSize(PNG.length)})` }, { type: "image", mimeType: "image/png", data: Buffer.from(PNG).toString("base64") }]);
  });

  test.concurrent("an image that does not decode is not sent; one of another type is sent as PNG", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "broken.png"), PNG.subarray(0, 20));
    const broken = await run(read, { path: "broken.png" }, context(dir));
    expect(broken.content).toEqual([{ type: "text", text: "Read image broken.png (image/png, 20B)\n[The image is not shown: it could not be decoded, or not made small enough to send.]" }]);
    // 2x1 24-bit BMP, declared by the operations' detectImageMimeType
    const bmp = Uint8Array.from([0x42, 0x4d, 62, 0, 0, 0, 0, 0, 0, 0, 54, 0, 0, 0, 40, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 24, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0x13, 0x0b, 0, 0, 0x13, 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0]);
    const ops = { access: async () => {}, readFile: async () => bmp, detectImageMimeType: async () => "image/bmp" };
    const r = await run(createReadTool({ operations: ops }), { path: "pic.bmp" }, context(dir));
    expect(textOf(r)).toBe("Read image pic.bmp (image/bmp, 62B)\n[Converted from image/bmp to image/png to be sent.]");
    expect(r.content[1]).toMatchObject({ type: "image", mimeType: "image/png" });
    expect(Buffer.from((r.content[1] as { data: string }).data, "base64").subarray(1, 4).toString()).toBe("PNG");
  });

  test("structuredContent is the text shown; the first text and image blocks decide it", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
    const r = await run(read, { path: "a.txt", limit: 1 }, context(dir));
    expect(r.structuredContent).toBe(textOf(r));
    expect(withReadOutput({ content: [] }).structuredContent).toBe("");
    const image = { type: "image" as const, data: "AA==", mimeType: "image/png" };
    expect(withReadOutput({ content: [image, { type: "text", text: "n" }] }).structuredContent).toEqual({ ...image, note: "n" });
  });

  test("invalid arguments name the field", async () => {
    await expect(read.parse({ path: { a: 1 } })).rejects.toThrow(ToolArgumentError);
    await expect(read.parse({ path: [1, 2] })).rejects.toThrow('"path": expected string');
    // Loose arguments are coerced first, as the reference's loop coerces a built-in tool's.
    expect(await read.parse({ path: 3, offset: "10", limit: null })).toEqual({ path: "3", offset: 10 });
    await expect(read.parse({ path: "a", offset: 0 })).rejects.toThrow('"offset"');
    await expect(read.parse({})).rejects.toThrow('"path"');
    expect(read.parameters).toMatchObject({ type: "object", required: ["path"] });
    expect(read.parameters.$schema).toBeUndefined();
  });
});
