/**
 * An extension's own dependencies resolve from its folder in the compiled binary as from source
 * (src/extensions/disk-modules.ts): ES modules with `exports` subpaths and conditions, CommonJS
 * requiring CommonJS, `#imports`, `.mjs` / `.cjs`, `import()`, `require`, `createRequire`.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, Pion, tempDirs, writeSettings } from "../support/pion.ts";
import { DEPS_RESULT, writeDepTree } from "../support/dep-tree.ts";

test.concurrent("-e npm:<name>@<version> installs the package with npm under $PION_HOME/tmp/extensions once, then loads it; a settings package is installed at start-up", async () => {
  const { home, cwd } = tempDirs();
  // A stand-in npm: installs a package whose extension registers /hi, and counts its runs.
  const npm = join(home, "fake-npm.sh");
  const ext = 'export default function (pi) { pi.registerCommand("hi", { description: "hi", handler: async () => {} }); }';
  writeFileSync(npm, `#!/bin/sh\necho run >> "${home}/npm-runs"\nmkdir -p "$4/node_modules/pi-x" && echo '{"name":"pi-x","pi":{"extensions":["./index.js"]}}' > "$4/node_modules/pi-x/package.json" && echo '${ext}' > "$4/node_modules/pi-x/index.js"\n`, { mode: 0o755 });
  for (let run = 0; run < 2; run++) {
    const p = new Pion({ home, cwd, env: { PION_NPM: npm }, args: ["--mode", "rpc", "--no-session", "-e", "npm:pi-x@1.0.0"] });
    const names = ((await p.request({ type: "get_commands" })).data.commands as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(["hi", "llama", "mcp"]);
    await p.close();
  }
  expect(readFileSync(join(home, "npm-runs"), "utf8")).toBe("run\n");
  // A settings package that is not installed yet is installed at start-up, into $PION_HOME/npm.
  writeSettings(home, { packages: ["npm:pi-x@1.0.0"] });
  const p = new Pion({ home, cwd, env: { PION_NPM: npm }, args: ["--mode", "rpc", "--no-session"] });
  expect(((await p.request({ type: "get_commands" })).data.commands as { name: string }[]).map((c) => c.name)).toEqual(["hi", "llama", "mcp"]);
  await p.close();
  expect(existsSync(join(home, "npm", "node_modules", "pi-x", "index.js"))).toBe(true);
});

for (const binary of [false, true]) {
  const d = binary && !existsSync(BINARY) ? describe.skip : describe;
  d(binary ? "dist/pion" : "bun src/cli.ts", () => {
    test.concurrent("the extension's bare imports resolve from its node_modules", async () => {
      const { home, cwd } = tempDirs();
      const p = new Pion({ home, cwd, binary, args: ["--mode", "rpc", "--no-session", "-e", writeDepTree()] });
      await p.request({ type: "prompt", message: "/deps" });
      const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify");
      expect(note.message).toBe(DEPS_RESULT);
      expect(p.records.filter((r) => r.type === "extension_error")).toEqual([]);
      await p.close();
    });

    test.concurrent("settings packages load: the user's always, a project's only when the folder is trusted", async () => {
      const { home, cwd } = tempDirs();
      writeSettings(home, { packages: [writeDepTree()] });
      mkdirSync(join(cwd, ".pion"), { recursive: true });
      writeFileSync(join(cwd, ".pion", "settings.json"), JSON.stringify({ packages: [{ source: writeDepTree() }] }));
      for (const trust of ["--no-approve", "--approve"]) {
        const p = new Pion({ home, cwd, binary, args: ["--mode", "rpc", "--no-session", trust] });
        const names = ((await p.request({ type: "get_commands" })).data.commands as { name: string }[]).map((c) => c.name);
        // Two packages with a /deps command: the second is /deps:2, as for any clash.
        expect(names).toEqual(trust === "--approve" ? ["deps:1", "deps:2", "llama", "mcp"] : ["deps", "llama", "mcp"]);
        await p.close();
      }
    });
  });
}

// pion's modules for the reference's packages load with the first extension that needs them
// (src/extensions/virtual-modules.ts): an import waits for them; a require cannot, so they are
// loaded before an extension file that requires anything.
test.concurrent("the reference's modules: a lone file importing none, one importing them, one requiring them through its helper", async () => {
  const { home, cwd } = tempDirs();
  const dir = join(cwd, "exts");
  mkdirSync(dir);
  writeFileSync(join(dir, "plain.ts"), 'export default function (pi) { pi.registerCommand("plain", { description: "no imports", handler: async () => {} }); }\n');
  writeFileSync(join(dir, "imports.ts"), 'import { truncateLine } from "@earendil-works/pi-coding-agent";\nexport default function (pi) { pi.registerCommand("imports", { description: truncateLine("x".repeat(20), 5).text, handler: async () => {} }); }\n');
  writeFileSync(join(dir, "helper.cjs"), 'const { visibleWidth } = require("@mariozechner/pi-tui");\nmodule.exports = { width: visibleWidth("中文") };\n');
  writeFileSync(join(dir, "requires.ts"), 'import { createRequire } from "node:module";\nconst helper = createRequire(import.meta.url)("./helper.cjs");\nexport default function (pi) { pi.registerCommand("requires", { description: `width ${helper.width}`, handler: async () => {} }); }\n');
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--no-session", ...["plain", "requires", "imports"].flatMap((n) => ["-e", join(dir, `${n}.ts`)])] });
  const commands = (await p.request({ type: "get_commands" })).data.commands as { name: string; description: string }[];
  expect(commands.map((c) => [c.name, c.description])).toEqual([
    ["plain", "no imports"],
    ["requires", "width 4"],
    ["imports", "xxxxx... [truncated]"],
    ["llama", "Manage llama.cpp router models"],
    ["mcp", "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure"],
  ]);
  expect(p.records.filter((r) => r.type === "extension_error")).toEqual([]);
  await p.close();
});
