/**
 * A package folder with its own node_modules, written by hand (no npm): an ES module dependency
 * with `exports` subpaths and conditions, a CommonJS one that requires another bare CommonJS
 * package, `#imports`, `.mjs` / `.cjs` files, and an extension that uses all of them through
 * `import`, `import()`, `require` and `createRequire`. Its `/deps` command notifies one line
 * with every result.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

export const DEPS_RESULT = "esm=ESM:main sub=ESM:sub cond=import cjs=cjs:leaf-41 dyn=ESM:main req=cjs:leaf-41 cr=cjs:leaf-41 hash=inner mjs=mjs cjsfile=cjsfile";

export function writeDepTree(): string {
  const root = join(mkdtempSync(join(tmpdir(), "pion-deps-")), "pkg");
  write(root, {
    "package.json": JSON.stringify({ name: "dep-ext", type: "module", imports: { "#inner": "./lib/inner.ts" }, pi: { extensions: ["./index.ts"] } }),
    "lib/inner.ts": 'export const inner = "inner";\n',
    "lib/m.mjs": 'export const mjs = "mjs";\n',
    "lib/c.cjs": 'module.exports = { cjsfile: "cjsfile" };\n',
    "node_modules/esm-dep/package.json": JSON.stringify({
      name: "esm-dep",
      type: "module",
      exports: { ".": "./dist/main.js", "./sub": { types: "./x.d.ts", import: "./dist/sub.js", require: "./dist/sub.cjs" }, "./cond": { require: "./dist/req.js", import: "./dist/imp.js" } },
    }),
    "node_modules/esm-dep/dist/main.js": 'export const name = "ESM:main";\n',
    "node_modules/esm-dep/dist/sub.js": 'export const name = "ESM:sub";\n',
    "node_modules/esm-dep/dist/imp.js": 'export const which = "import";\n',
    "node_modules/esm-dep/dist/req.js": 'export const which = "require";\n',
    "node_modules/cjs-dep/package.json": JSON.stringify({ name: "cjs-dep", main: "lib/index.js" }),
    "node_modules/cjs-dep/lib/index.js": 'const leaf = require("cjs-leaf");\nexports.value = "cjs:" + leaf();\n',
    "node_modules/cjs-leaf/package.json": JSON.stringify({ name: "cjs-leaf" }),
    "node_modules/cjs-leaf/index.js": 'module.exports = function leaf() { return "leaf-" + 41; };\n',
    "index.ts": `
import { name } from "esm-dep";
import { name as sub } from "esm-dep/sub";
import { which } from "esm-dep/cond";
import cjs from "cjs-dep";
import { inner } from "#inner";
import { mjs } from "./lib/m.mjs";
import { createRequire } from "node:module";
export default function (pi: any) {
  pi.registerCommand("deps", {
    description: "report resolved dependencies",
    handler: async (_args: string, ctx: any) => {
      const dyn = (await import("esm-dep")).name;
      const req = require("cjs-dep").value;
      const cr = createRequire(import.meta.url)("cjs-dep").value;
      const cjsfile = createRequire(import.meta.url)("./lib/c.cjs").cjsfile;
      ctx.ui.notify(\`esm=\${name} sub=\${sub} cond=\${which} cjs=\${cjs.value} dyn=\${dyn} req=\${req} cr=\${cr} hash=\${inner} mjs=\${mjs} cjsfile=\${cjsfile}\`, "info");
    },
  });
}
`,
  });
  return root;
}
