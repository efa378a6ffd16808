/**
 * The reference's package names, served to extensions as Bun virtual modules so their
 * imports resolve inside the compiled binary (no node_modules next to it). Type-only imports
 * vanish when Bun transpiles; these are the runtime names the reference's documented examples
 * import. Every helper does what its name says (text-helpers.ts, type-builder.ts, and the
 * built-in tool factories in tool-factories.ts); the inert
 * stand-ins for TUI pieces pion never renders are all in tui-stand-ins.ts; functions pion
 * cannot offer throw a clear error when called, so an extension that needs them fails with a
 * message instead of "export not found".
 *
 * Verified: `Bun.plugin` + `build.module(..., { loader: "object" })` applies to files loaded
 * later with dynamic `import()`, both under `bun run` and in a `bun build --compile` binary.
 * A named import missing from `exports` is a load error, hence the explicit lists below.
 */
import { pionHome, VERSION } from "../config.ts";
import { isCompiledBinary, registerDiskModules } from "./disk-modules.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "../tools/truncate.ts";
import { modelCallExports } from "./model-calls.ts";
import { toolSetExports } from "./surface/tool-sets.ts";
import { SessionManager } from "./surface/session-manager.ts";
import { Agent } from "./surface/agent.ts";
import { completeSurface, REFERENCE_PACKAGES, REFERENCE_VERSION, type ReferencePackage } from "./surface/export-surface.ts";
import { frontmatterExports, thinkingExports } from "./surface/plain-helpers.ts";
import * as text from "./text-helpers.ts";
import { toolFactoryExports } from "./tool-factories.ts";
import { TUI_MODULE_STAND_INS } from "./tui-stand-ins.ts";
import { StringEnum, Type } from "./type-builder.ts";
import { aiUtilExports } from "./surface/ai-utils.ts";
import { aiCompatExports, aiProviderExports } from "./surface/ai-providers.ts";
import { compactionExports } from "./surface/compaction-helpers.ts";
import { codingHelperExports } from "./surface/coding-helpers.ts";
import { agentCoreExports } from "./surface/agent-core.ts";
import { agentSessionExports } from "./surface/agent-session.ts";
import { agentRuntimeExports } from "./surface/agent-runtime.ts";

type Exports = Record<string, unknown>;


const fileQueues = new Map<string, Promise<unknown>>();

/** Serialize mutations of one file across tools (the reference's helper of the same name). */
function withFileMutationQueue<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const prev = fileQueues.get(path) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const tail = next.catch(() => undefined);
  fileQueues.set(path, tail);
  void tail.then(() => {
    if (fileQueues.get(path) === tail) fileQueues.delete(path);
  });
  return next;
}

/** UUID v7: 48-bit millisecond timestamp, then random bits with version and variant set. */
function uuidv7(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const ms = Date.now();
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(ms / 2 ** (8 * (5 - i))) & 0xff;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const codingAgent: Exports = {
  defineTool: <T>(tool: T): T => tool,
  isToolCallEventType: (name: string, event: { toolName?: unknown }) => event.toolName === name,
  isBashToolResult: (event: { toolName?: unknown }) => event.toolName === "bash",
  VERSION,
  CONFIG_DIR_NAME: ".pion",
  getAgentDir: () => pionHome(),
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  GREP_MAX_LINE_LENGTH: text.GREP_MAX_LINE_LENGTH,
  formatSize,
  truncateHead: text.truncateHead,
  truncateTail: text.truncateTail,
  truncateLine: text.truncateLine,
  formatReadLineRange: (offset?: number, limit?: number) => (offset || limit ? `${offset ?? 1}-${limit ? (offset ?? 1) + limit - 1 : ""}` : ""),
  withFileMutationQueue,
};
Object.assign(codingAgent, toolFactoryExports());
Object.assign(codingAgent, toolSetExports(codingAgent), { SessionManager });
Object.assign(codingAgent, frontmatterExports, compactionExports, codingHelperExports, agentSessionExports, agentRuntimeExports);

const ai: Exports = { Type, StringEnum, uuidv7, PI_AI_VERSION: REFERENCE_VERSION, ...thinkingExports, ...modelCallExports, ...aiUtilExports, ...aiProviderExports };

const tui: Exports = {
  visibleWidth: text.visibleWidth,
  truncateToWidth: text.truncateToWidth,
  wrapTextWithAnsi: text.wrapTextWithAnsi,
  fuzzyFilter: text.fuzzyFilter,
  fuzzyMatch: text.fuzzyMatch,
};

Object.assign(tui, TUI_MODULE_STAND_INS.tui);
Object.assign(codingAgent, TUI_MODULE_STAND_INS.codingAgent);

// The subpaths share pi-ai's own functions, then add their own names.
const aiCompat: Exports = { ...ai, ...aiCompatExports };
const aiModels: Exports = { ...ai };
const agentCore: Exports = { Agent, ...agentCoreExports };

/**
 * pion's module for each of the reference's packages, completed with the stand-ins of
 * export-surface.ts when first imported (a module an extension never imports costs nothing).
 */
const OWN: Record<ReferencePackage, Exports> = { "pi-coding-agent": codingAgent, "pi-ai": ai, "pi-ai/compat": aiCompat, "pi-ai/models": aiModels, "pi-agent-core": agentCore, "pi-tui": tui };
const completed = new Set<ReferencePackage>();
function surfaceOf(pkg: ReferencePackage): Exports {
  if (!completed.has(pkg)) {
    completed.add(pkg);
    completeSurface(pkg, OWN[pkg]);
  }
  return OWN[pkg];
}

/** Every module completed (the generated list is checked against these). */
export const referenceModules = (): Record<ReferencePackage, Exports> =>
  Object.fromEntries(REFERENCE_PACKAGES.map((pkg) => [pkg, surfaceOf(pkg)])) as Record<ReferencePackage, Exports>;

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

/** Package name → its (completed) exports. */
export const virtualModule = (name: string): Exports | undefined => (PACKAGE_NAMES[name] ? surfaceOf(PACKAGE_NAMES[name]) : undefined);

let registered = false;

/** Register the virtual modules once per process (Bun's plugin registry is process-wide). */
export function registerVirtualModules(): void {
  if (registered) return;
  registered = true;
  Bun.plugin({
    name: "pion-extension-modules",
    setup(build) {
      for (const [name, pkg] of Object.entries(PACKAGE_NAMES)) build.module(name, () => ({ exports: surfaceOf(pkg), loader: "object" }));
      for (const [name, load] of Object.entries(TYPEBOX)) build.module(name, () => ({ exports: load(), loader: "object" }));
      if (isCompiledBinary()) registerDiskModules(build, { virtual: new Set([...Object.keys(PACKAGE_NAMES), ...Object.keys(TYPEBOX)]) });
    },
  });
}
