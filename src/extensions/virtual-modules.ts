/**
 * The reference's package names, served to extensions as Bun virtual modules so their
 * imports resolve inside the compiled binary (no node_modules next to it). The modules
 * themselves (surface/modules.ts: every name the reference exports, pion's own or a stand-in)
 * are loaded with the first extension that imports one; an extension that imports none never
 * pays for them.
 *
 * Verified: `Bun.plugin` + `build.module(..., { loader: "object" })` applies to files loaded
 * later with dynamic `import()`, both under `bun run` and in a `bun build --compile` binary, and
 * its callback may answer with a promise for an `import` (never for a `require`).
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { isCompiledBinary, registerDiskModules } from "./disk-modules.ts";
import { REFERENCE_PACKAGES, type ReferencePackage } from "./surface/reference-packages.ts";

type Exports = Record<string, unknown>;
type PackageModule = { PACKAGES: Record<string, Exports> };

/** Each package's module (surface/package-*.ts), loaded with the first import of that package. */
const LOADERS: Record<ReferencePackage, () => Promise<PackageModule>> = {
  "pi-coding-agent": () => import("./surface/package-coding-agent.ts"),
  "pi-ai": () => import("./surface/package-ai.ts"),
  "pi-ai/compat": () => import("./surface/package-ai.ts"),
  "pi-ai/models": () => import("./surface/package-ai.ts"),
  "pi-agent-core": () => import("./surface/package-agent-core.ts"),
  "pi-tui": () => import("./surface/package-tui.ts"),
};
const loaded = new Map<ReferencePackage, Exports>();

async function loadPackage(pkg: ReferencePackage): Promise<Exports> {
  const exports = loaded.get(pkg) ?? (await LOADERS[pkg]()).PACKAGES[pkg]!;
  loaded.set(pkg, exports);
  return exports;
}

/**
 * Load pion's modules for every one of the reference's packages. An `import` of one loads it by
 * itself; a `require` cannot wait, so the loader calls this first for an extension that may
 * require them (extensionNeedsSurface).
 */
export async function loadReferenceModules(): Promise<void> {
  await Promise.all(REFERENCE_PACKAGES.map(loadPackage));
}

const REQUIRES = /require/i;

/**
 * Whether an extension must have the reference's modules loaded before it is imported, because a
 * `require` may reach them: one in or beside a package (its dependencies), or a file that
 * requires anything. A lone file of `import`s loads just the packages it imports, as it imports them.
 */
export async function extensionNeedsSurface(path: string): Promise<boolean> {
  if (path.includes("/node_modules/")) return true;
  const dir = dirname(path);
  if (existsSync(join(dir, "package.json")) || existsSync(join(dir, "node_modules")) || existsSync(join(dirname(dir), "package.json"))) return true;
  try {
    const file = Bun.file(path);
    return (await file.size) > 1_000_000 || REQUIRES.test(await file.text());
  } catch {
    return true;
  }
}

/**
 * TypeBox itself (the version the reference ships), loaded on first import: its `Type`, `Value`,
 * `Compile`... behave exactly as for the reference's extensions. Its schemas are plain JSON
 * Schema, which is what pion validates tool arguments with and sends to the model.
 */
const TYPEBOX: Record<string, () => Exports> = {
  // In the binary the literal requires are bundled; from source they would find these virtual
  // modules themselves, so the package's own files are required by path.
  typebox: () => withDefault(isCompiledBinary() ? require("typebox") : fromDisk("typebox")),
  "typebox/value": () => withDefault(isCompiledBinary() ? require("typebox/value") : fromDisk("typebox/value")),
  "typebox/compile": () => withDefault(isCompiledBinary() ? require("typebox/compile") : fromDisk("typebox/compile")),
  "typebox/type": () => withDefault(isCompiledBinary() ? require("typebox/type") : fromDisk("typebox/type")),
  "typebox/guard": () => withDefault(isCompiledBinary() ? require("typebox/guard") : fromDisk("typebox/guard")),
  "typebox/format": () => withDefault(isCompiledBinary() ? require("typebox/format") : fromDisk("typebox/format")),
  "typebox/error": () => withDefault(isCompiledBinary() ? require("typebox/error") : fromDisk("typebox/error")),
  "typebox/system": () => withDefault(isCompiledBinary() ? require("typebox/system") : fromDisk("typebox/system")),
  "typebox/schema": () => withDefault(isCompiledBinary() ? require("typebox/schema") : fromDisk("typebox/schema")),
};
const fromDisk = (spec: string): Exports => require(Bun.resolveSync(spec, import.meta.dir)) as Exports;
function withDefault(ns: Exports): Exports {
  return { ...ns, default: ns.default ?? ns.Type ?? ns };
}
for (const [name, load] of Object.entries({ ...TYPEBOX })) TYPEBOX[name.replace(/^typebox/, "@sinclair/typebox")] = load;

/** Package name → which of the reference's modules. Legacy `@mariozechner/*` names map to the same modules. */
const PACKAGE_NAMES: Record<string, ReferencePackage> = Object.fromEntries(
  REFERENCE_PACKAGES.flatMap((pkg) => [`@earendil-works/${pkg}`, `@mariozechner/${pkg}`].map((name) => [name, pkg])),
);


let registered = false;

/** Register the virtual modules once per process (Bun's plugin registry is process-wide). */
export function registerVirtualModules(): void {
  if (registered) return;
  registered = true;
  Bun.plugin({
    name: "pion-extension-modules",
    setup(build) {
      // Loaded with the first import of any of them (at once when already loaded, as a require needs).
      for (const [name, pkg] of Object.entries(PACKAGE_NAMES)) {
        build.module(name, () => {
          const ready = loaded.get(pkg);
          return ready ? { exports: ready, loader: "object" as const } : loadPackage(pkg).then((exports) => ({ exports, loader: "object" as const }));
        });
      }
      for (const [name, load] of Object.entries(TYPEBOX)) build.module(name, () => ({ exports: load(), loader: "object" }));
      if (isCompiledBinary()) registerDiskModules(build, { virtual: new Set([...Object.keys(PACKAGE_NAMES), ...Object.keys(TYPEBOX)]) });
    },
  });
}
