/**
 * Node/Bun package resolution from a folder, in plain TypeScript: the compiled binary's own
 * resolver finds nothing in any `node_modules` (Bun >= 1.3.4 turns that lookup off in a
 * `--compile` executable; `import()`, `require`, `createRequire` and `Bun.resolveSync` all fail
 * there), so disk-modules.ts asks this one for every bare specifier an extension's files use.
 *
 * What it honours, as Bun does for a script on disk: `node_modules` in the folder and every parent,
 * scoped names, package `exports` (subpaths, `*` patterns, nested conditions, arrays) and
 * `imports` (`#name`), a package importing itself by name, `module` / `main`, and the extension
 * and `index` probing of files and folders. Conditions: `bun`, `node`, `import` or `require`,
 * `module` for imports, `default`.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { isDir, isFile } from "../util/fs-kind.ts";

export type ImportKind = "import" | "require";

const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx", ".json", ".node"];

interface PackageJson {
  name?: unknown;
  type?: unknown;
  main?: unknown;
  module?: unknown;
  exports?: unknown;
  imports?: unknown;
}

const manifests = new Map<string, PackageJson | null>();

/** The parsed package.json in `dir`, or null (missing or unreadable: a folder without a manifest). */
export function readManifest(dir: string): PackageJson | null {
  const cached = manifests.get(dir);
  if (cached !== undefined) return cached;
  let json: PackageJson | null = null;
  const file = join(dir, "package.json");
  if (existsSync(file)) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
      json = parsed && typeof parsed === "object" ? (parsed as PackageJson) : null;
    } catch {
      json = null; // a broken manifest resolves like none, as Bun's resolver treats it
    }
  }
  manifests.set(dir, json);
  return json;
}

/** The folder of the nearest package.json at or above `dir`, with its contents. */
export function nearestPackage(dir: string): { dir: string; json: PackageJson } | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const json = readManifest(d);
    if (json) return { dir: d, json };
    if (dirname(d) === d) return undefined;
  }
}


/** A bare specifier: a package name (not relative, absolute, a URL or a `node:`-style scheme). */
export function isBareSpecifier(spec: string): boolean {
  return !/^(\.{1,2}(\/|$)|\/|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(spec);
}

/** Split `@scope/name/sub/path` into the package name and `./sub/path` (or "."). */
export function splitSpecifier(spec: string): { name: string; subpath: string } {
  const parts = spec.split("/");
  const n = spec.startsWith("@") ? 2 : 1;
  const rest = parts.slice(n).join("/");
  return { name: parts.slice(0, n).join("/"), subpath: rest ? `./${rest}` : "." };
}

/** A file, the file with one of the extensions, or the folder's package main / index. */
function probe(path: string, kind: ImportKind): string | undefined {
  if (isFile(path)) return path;
  for (const ext of EXTENSIONS) if (isFile(path + ext)) return path + ext;
  // TypeScript sources import "./x.js" meaning "./x.ts".
  const m = /\.(m|c)?js$/.exec(path);
  if (m) {
    const base = path.slice(0, -m[0].length);
    for (const ext of [`.${m[1] ?? ""}ts`, ".tsx"]) if (isFile(base + ext)) return base + ext;
  }
  if (isDir(path)) {
    const json = readManifest(path);
    const main = json ? mainField(json, kind) : undefined;
    if (main) {
      const found = probe(resolve(path, main), kind);
      if (found) return found;
    }
    for (const ext of EXTENSIONS) if (isFile(join(path, `index${ext}`))) return join(path, `index${ext}`);
  }
  return undefined;
}

function mainField(json: PackageJson, kind: ImportKind): string | undefined {
  if (kind === "import" && typeof json.module === "string") return json.module;
  return typeof json.main === "string" ? json.main : undefined;
}

const conditionsFor = (kind: ImportKind): readonly string[] =>
  kind === "import" ? ["bun", "node", "import", "module", "default"] : ["bun", "node", "require", "default"];

/** One `exports` / `imports` target with its conditions applied; `*` replaced by `star`. */
function pickTarget(target: unknown, kind: ImportKind, star: string | undefined): string | undefined | null {
  if (typeof target === "string") return star === undefined ? target : target.replaceAll("*", star);
  if (target === null) return null; // explicitly not exported
  if (Array.isArray(target)) {
    for (const t of target) {
      const picked = pickTarget(t, kind, star);
      if (typeof picked === "string") return picked;
    }
    return undefined;
  }
  if (target && typeof target === "object") {
    const conditions = conditionsFor(kind);
    for (const [key, value] of Object.entries(target)) {
      if (!conditions.includes(key)) continue;
      const picked = pickTarget(value, kind, star);
      if (picked !== undefined) return picked;
    }
  }
  return undefined;
}

/** Look `subpath` up in an exports or imports map (exact keys first, then the longest `*` pattern). */
function matchMap(map: unknown, subpath: string, kind: ImportKind): string | undefined | null {
  const isSugar = typeof map === "string" || Array.isArray(map) || (map && typeof map === "object" && !Object.keys(map).some((k) => k.startsWith(".") || k.startsWith("#")));
  if (isSugar) return subpath === "." ? pickTarget(map, kind, undefined) : undefined;
  const entries = Object.entries(map as Record<string, unknown>);
  const exact = entries.find(([k]) => k === subpath);
  if (exact) return pickTarget(exact[1], kind, undefined);
  let best: { key: string; star: string; value: unknown } | undefined;
  for (const [key, value] of entries) {
    const at = key.indexOf("*");
    if (at === -1) {
      // Old-style folder mappings ("./lib/": "./lib/").
      if (key.endsWith("/") && subpath.startsWith(key) && (!best || key.length > best.key.length)) best = { key, star: subpath.slice(key.length), value };
      continue;
    }
    const head = key.slice(0, at);
    const tail = key.slice(at + 1);
    if (subpath.startsWith(head) && subpath.endsWith(tail) && subpath.length >= key.length - 1 && (!best || head.length > best.key.indexOf("*"))) {
      best = { key, star: subpath.slice(head.length, subpath.length - tail.length), value };
    }
  }
  if (!best) return undefined;
  if (!best.key.includes("*")) {
    const t = pickTarget(best.value, kind, undefined);
    return typeof t === "string" ? t + best.star : t;
  }
  return pickTarget(best.value, kind, best.star);
}

function resolveInPackage(pkgDir: string, json: PackageJson | null, subpath: string, kind: ImportKind): string | undefined {
  if (json && json.exports !== undefined && json.exports !== null) {
    const target = matchMap(json.exports, subpath, kind);
    return typeof target === "string" ? probeExact(resolve(pkgDir, target), kind) : undefined;
  }
  return probe(subpath === "." ? pkgDir : resolve(pkgDir, subpath), kind);
}

/** An exports target names a file exactly; Bun still finds a TypeScript source beside a `.js` name. */
const probeExact = (path: string, kind: ImportKind): string | undefined => (isFile(path) ? path : probe(path, kind));

/**
 * The absolute file `spec` (a bare specifier or `#import`) names for a module in `fromDir`, or
 * undefined when nothing on disk matches (the caller lets the import fail as it would).
 */
export function resolveFrom(spec: string, fromDir: string, kind: ImportKind = "import"): string | undefined {
  if (spec.startsWith("#")) {
    const pkg = nearestPackage(fromDir);
    if (!pkg?.json.imports) return undefined;
    const target = matchMap(pkg.json.imports, spec, kind);
    if (typeof target !== "string") return undefined;
    return isBareSpecifier(target) ? resolveFrom(target, pkg.dir, kind) : probeExact(resolve(pkg.dir, target), kind);
  }
  const { name, subpath } = splitSpecifier(spec);
  for (let d = fromDir; ; d = dirname(d)) {
    if (!d.endsWith("/node_modules")) {
      const pkgDir = join(d, "node_modules", name);
      if (isDir(pkgDir)) {
        const found = resolveInPackage(pkgDir, readManifest(pkgDir), subpath, kind);
        if (found) return found;
      }
    }
    if (dirname(d) === d) break;
  }
  const self = nearestPackage(fromDir);
  if (self && self.json.name === name) return resolveInPackage(self.dir, self.json, subpath, kind);
  return undefined;
}
