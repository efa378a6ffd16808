import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolFactoryExports, type BashOperations, type FactoryTool } from "../../../src/extensions/tool-factories.ts";
import type { ReadOperations } from "../../../src/tools/read.ts";
import { tmp } from "../tools/harness.ts";

const f = toolFactoryExports() as Record<string, (cwd: string, options?: unknown) => FactoryTool> & {
  createLocalBashOperations: () => BashOperations;
};
// A 1x1 PNG (the read tool decodes images to check their size).
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

describe("tool factories", () => {
  test("every factory and its Definition form exists; definitions carry a prompt snippet", () => {
    for (const name of ["Read", "Write", "Edit", "Bash", "Grep", "Find", "Ls"]) {
      const tool = f[`create${name}Tool`]!("/");
      const def = f[`create${name}ToolDefinition`]!("/");
      expect(tool.name).toBe(name.toLowerCase());
      expect(def.parameters).toEqual(tool.parameters);
      expect(def.promptSnippet).toBe(tool.description.split("\n")[0]);
      expect(tool.promptSnippet).toBeUndefined();
    }
  });

  test("read through a stream keeps a window of lines; an image is recognised by its bytes", async () => {
    const files: Record<string, Uint8Array> = { "/r/big.txt": new TextEncoder().encode(Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join("\n")), "/r/pic.png": PNG };
    let streamed = 0;
    const operations: ReadOperations = {
      access: async (p) => {
        if (!files[p]) throw Object.assign(new Error("nope"), { code: "ENOENT" });
      },
      readFile: async (p) => files[p]!,
      async *createReadStream(p) {
        const bytes = files[p]!;
        for (let i = 0; i < bytes.length; i += 16) {
          streamed++;
          yield bytes.subarray(i, i + 16);
        }
      },
    };
    const read = f.createReadTool!("/r", { operations });
    const window = await read.execute("c1", { path: "big.txt", offset: 10, limit: 2 });
    expect(window.content).toEqual([{ type: "text", text: "line 10\nline 11\n\n[39 more lines in the file. Use offset=12 to continue.]" }]);
    expect(streamed).toBeGreaterThan(1);
    const image = await read.execute("c2", { path: "pic.png" });
    expect(image.content[1]).toEqual({ type: "image", mimeType: "image/png", data: Buffer.from(PNG).toString("base64") });
    await expect(read.execute("c3", { path: "gone.txt" })).rejects.toThrow("File not found: gone.txt");
    await expect(read.execute("c4", { path: { name: 42 } })).rejects.toThrow('"path"');
  });

  test("bash through operations: output, exit code, abort; a failing runner is the tool's error", async () => {
    const seen: { command: string; cwd: string }[] = [];
    const operations: BashOperations = {
      exec: async (command, cwd, o) => {
        seen.push({ command, cwd });
        if (command === "boom") throw new Error("ssh: connect to host devbox: Connection refused");
        if (command === "hang") {
          await new Promise((resolve) => o.signal?.addEventListener("abort", resolve, { once: true }));
          throw new Error("aborted");
        }
        o.onData(Buffer.from("out\n"));
        return { exitCode: 2 };
      },
    };
    const bash = f.createBashTool!("/here", { operations });
    expect(await bash.execute("b1", { command: "ls" })).toMatchObject({ isError: true, content: [{ type: "text", text: "out\n\nCommand exited with code 2" }] });
    expect(seen[0]).toEqual({ command: "ls", cwd: "/here" });
    await expect(bash.execute("b2", { command: "boom" })).rejects.toThrow("Connection refused");
    const stop = new AbortController();
    const hung = bash.execute("b3", { command: "hang" }, stop.signal);
    stop.abort();
    expect(await hung).toMatchObject({ isError: true, content: [{ type: "text", text: "(no output)\n\nCommand aborted" }] });
  });

  test("createLocalBashOperations streams output and ends on timeout or abort", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "f.txt"), "x");
    const ops = f.createLocalBashOperations();
    const chunks: string[] = [];
    expect(await ops.exec("ls; echo err >&2; exit 4", dir, { onData: (d) => chunks.push(Buffer.from(d).toString()) })).toEqual({ exitCode: 4 });
    expect(chunks.join("").split("\n").sort()).toEqual(["", "err", "f.txt"]);
    await expect(ops.exec("sleep 5", dir, { onData: () => {}, timeout: 0.05 })).rejects.toThrow("timeout:0.05");
    const stop = new AbortController();
    const running = ops.exec("sleep 5", dir, { onData: () => {}, signal: stop.signal });
    stop.abort();
    await expect(running).rejects.toThrow("aborted");
  });

  test("edit accepts the older single replacement before its schema is checked", () => {
    const edit = f.createEditTool!("/");
    expect(edit.prepareArguments!({ path: "a", oldText: "x", newText: "y" })).toEqual({ path: "a", edits: [{ oldText: "x", newText: "y" }] });
    expect(edit.prepareArguments!({ path: 1 })).toEqual({ path: 1 });
  });
});
