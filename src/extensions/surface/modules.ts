/**
 * pion's modules for the reference's packages (served by virtual-modules.ts): each package's own
 * names, completed with export-surface.ts's stand-ins when first imported. Loaded with the first
 * extension that imports one of the packages, never for an extension that imports none.
 */
import { pionHome, VERSION } from "../../config.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "../../tools/truncate.ts";
import { modelCallExports } from "../model-calls.ts";
import { toolSetExports } from "./tool-sets.ts";
import { SessionManager } from "./session-manager.ts";
import { Agent } from "./agent.ts";
import { completeSurface, REFERENCE_PACKAGES, REFERENCE_VERSION, type ReferencePackage } from "./export-surface.ts";
import { frontmatterExports, thinkingExports } from "./plain-helpers.ts";
import * as text from "../text-helpers.ts";
import { toolFactoryExports } from "../tool-factories.ts";
import { TUI_MODULE_STAND_INS } from "../tui-stand-ins.ts";
import { StringEnum, Type } from "../type-builder.ts";
import { aiUtilExports } from "./ai-utils.ts";
import { aiCompatExports, aiProviderExports } from "./ai-providers.ts";
import { compactionExports } from "./compaction-helpers.ts";
import { codingHelperExports } from "./coding-helpers.ts";
import { agentCoreExports } from "./agent-core.ts";
import { agentSessionExports } from "./agent-session.ts";
import { agentRuntimeExports } from "./agent-runtime.ts";

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
export function surfaceOf(pkg: ReferencePackage): Exports {
  if (!completed.has(pkg)) {
    completed.add(pkg);
    completeSurface(pkg, OWN[pkg]);
  }
  return OWN[pkg];
}

/** Every module completed (the generated list is checked against these). */
export const referenceModules = (): Record<ReferencePackage, Exports> =>
  Object.fromEntries(REFERENCE_PACKAGES.map((pkg) => [pkg, surfaceOf(pkg)])) as Record<ReferencePackage, Exports>;

