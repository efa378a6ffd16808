/**
 * In the compiled binary, extensions' files and their dependencies load from disk through one
 * Bun plugin, because the binary's resolver never looks in `node_modules` (resolve.ts) and a
 * runtime plugin's `onResolve` is never asked about a bare specifier (oven-sh/bun#40579), while
 * `onLoad` is asked about every file with an extension outside `/$bunfs/`:
 *
 * - an ES module (or TypeScript) file is read and each bare specifier in its `import`, `export
 *   ... from`, `import()` and `require()` literals is replaced by the absolute file resolve.ts
 *   finds from the file's folder (an absolute path the binary loads); the reference's package
 *   names (virtual-modules.ts) and built-in modules are left for Bun;
 * - a CommonJS file is run here, with a `require` that resolves the same way, and handed to Bun
 *   as an object module (`default` is `module.exports`, its keys the named exports), because
 *   contents returned from `onLoad` are always parsed as an ES module.
 *
 * Under `bun src/cli.ts` Bun's own resolver works and this plugin is not installed.
 */
import { readFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { builtinModules, createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { runInThisContext } from "node:vm";
import { isBareSpecifier, nearestPackage, resolveFrom, type ImportKind } from "./resolve.ts";

/** Whether this process is the compiled binary (its own modules live in Bun's `/$bunfs/`). */
export const isCompiledBinary = (): boolean => import.meta.url.includes("$bunfs");

const BUILTINS = new Set(builtinModules);
const isBuiltin = (spec: string): boolean => BUILTINS.has(spec) || spec === "bun" || /^(node|bun):/.test(spec);

/** Specifier literals in a module's source: `from "x"`, `import "x"`, `import("x")`, `require("x")`, `require.resolve("x")`. */
const SPECIFIER = /(\b(?:from|import|require(?:\.resolve)?)\s*\(?\s*)(["'])([^"'\n\r]+)\2/g;

/** `node:module` with a `createRequire` whose `require` resolves as this file's does. */
const NODE_MODULE = "@pion/node-module";

export interface DiskModules {
  /** The reference's package names, served as virtual modules: never resolved from disk. */
  virtual: ReadonlySet<string>;
}

/** Rewrite every resolvable bare specifier in `source` (a file in `dir`) to its absolute path. */
export function rewriteSpecifiers(source: string, dir: string, virtual: ReadonlySet<string>): string {
  return source.replace(SPECIFIER, (whole, head: string, quote: string, spec: string) => {
    if (spec === "module" || spec === "node:module") return `${head}${quote}${NODE_MODULE}${quote}`;
    if (!needsDisk(spec, virtual)) return whole;
    const kind: ImportKind = head.startsWith("require") ? "require" : "import";
    const found = resolveFrom(spec, dir, kind);
    if (!found) return whole;
    // Bun's `require` of an object module would answer its namespace, not `module.exports`.
    if (head.startsWith("require") && !head.startsWith("require.") && /\.c?js$/.test(found) && isCommonJs(found, readFileSync(found, "utf8"))) {
      return `globalThis[Symbol.for("pion.requireCommonJs")](${JSON.stringify(found)}`;
    }
    return `${head}${quote}${found}${quote}`;
  });
}

const needsDisk = (spec: string, virtual: ReadonlySet<string>): boolean =>
  (isBareSpecifier(spec) || spec.startsWith("#")) && !isBuiltin(spec) && !virtual.has(spec);

/** Whether a `.js` / `.cjs` file is CommonJS, as Bun decides: the extension, the package `type`, then its syntax. */
export function isCommonJs(path: string, source: string): boolean {
  if (/\.c[jt]s$/.test(path)) return true;
  if (!/\.js$/.test(path)) return false;
  const type = nearestPackage(dirname(path))?.json.type;
  if (type === "module") return false;
  try {
    const scan = new Bun.Transpiler({ loader: "js" }).scan(source);
    if (scan.exports.length > 0 || scan.imports.some((i) => i.kind === "import-statement") || /\bimport\.meta\b/.test(source)) return false;
  } catch {
    return true; // not a valid module (top-level `return`): only CommonJS allows that
  }
  return /\b(module\.exports|exports\.[\w$]+|exports\[|require\s*\()/.test(source);
}

interface CjsModule {
  id: string;
  filename: string;
  exports: unknown;
  loaded: boolean;
  children: CjsModule[];
  paths: string[];
  require?: NodeRequire;
}

const cjsCache = new Map<string, CjsModule>();

/** Run a CommonJS file (once; a require cycle sees the partial `module.exports`, as in Node). */
export function loadCommonJs(path: string, virtual: ReadonlySet<string>): unknown {
  const cached = cjsCache.get(path);
  if (cached) return cached.exports;
  const mod: CjsModule = { id: path, filename: path, exports: {}, loaded: false, children: [], paths: [] };
  cjsCache.set(path, mod);
  let source = readFileSync(path, "utf8");
  if (source.startsWith("#!")) source = `//${source}`;
  if (/\.cts$/.test(path)) source = new Bun.Transpiler({ loader: "ts" }).transformSync(source);
  const require = cjsRequire(path, virtual);
  mod.require = require;
  const wrapper = runInThisContext(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: path }) as (
    ...args: unknown[]
  ) => void;
  try {
    wrapper.call(mod.exports, mod.exports, require, mod, path, dirname(path));
  } catch (err) {
    cjsCache.delete(path);
    throw err;
  }
  mod.loaded = true;
  return mod.exports;
}

export function cjsRequire(from: string, virtual: ReadonlySet<string>): NodeRequire {
  const native = createRequire(from);
  const resolvePath = (spec: string): string => {
    if (!needsDisk(spec, virtual)) return spec.startsWith(".") || spec.startsWith("/") ? native.resolve(spec) : spec;
    const found = resolveFrom(spec, dirname(from), "require");
    if (!found) throw Object.assign(new Error(`Cannot find module '${spec}' from '${from}'`), { code: "MODULE_NOT_FOUND" });
    return found;
  };
  const require = ((spec: string) => {
    const target = resolvePath(spec);
    if (target.startsWith("/") && /\.(c?js|cts)$/.test(target)) {
      const source = readFileSync(target, "utf8");
      if (isCommonJs(target, source)) return loadCommonJs(target, virtual);
    }
    return native(target);
  }) as NodeRequire;
  return Object.assign(require, {
    resolve: Object.assign((spec: string) => resolvePath(spec), { paths: () => null }),
    cache: native.cache,
    main: undefined,
    extensions: native.extensions,
  }) as NodeRequire;
}

/** The object module Bun gets for a CommonJS file: its exports by name, and `default`. */
function asObjectModule(exports: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (exports && (typeof exports === "object" || typeof exports === "function")) {
    for (const key of Object.keys(exports)) out[key] = (exports as Record<string, unknown>)[key];
  }
  const esm = exports && typeof exports === "object" && (exports as { __esModule?: unknown }).__esModule;
  out.default = esm && "default" in (exports as object) ? (exports as { default: unknown }).default : exports;
  return out;
}

const loaderFor = (path: string): "ts" | "tsx" | "jsx" | "js" =>
  /\.[cm]?ts$/.test(path) ? "ts" : path.endsWith(".tsx") ? "tsx" : path.endsWith(".jsx") ? "jsx" : "js";

/** Install the plugin (once per process, and only in the compiled binary). */
export function registerDiskModules(build: Bun.PluginBuilder, opts: DiskModules): void {
  build.module(NODE_MODULE, () => {
    const createRequire = (from: string | URL) => cjsRequire(String(from).startsWith("file:") ? fileURLToPath(from) : String(from), opts.virtual);
    return { exports: { ...nodeModule, createRequire, default: Object.assign(Object.create(nodeModule.default as object), { createRequire }) }, loader: "object" };
  });
  (globalThis as Record<symbol, unknown>)[Symbol.for("pion.requireCommonJs")] = (path: string) => loadCommonJs(path, opts.virtual);
  build.onLoad({ filter: /^(?!\/\$bunfs\/).*\.(?:[cm]?[jt]s|[jt]sx)$/ }, (args) => {
    const source = readFileSync(args.path, "utf8");
    if (isCommonJs(args.path, source)) return { exports: asObjectModule(loadCommonJs(args.path, opts.virtual)), loader: "object" };
    return { contents: rewriteSpecifiers(source, dirname(args.path), opts.virtual), loader: loaderFor(args.path) };
  });
}
