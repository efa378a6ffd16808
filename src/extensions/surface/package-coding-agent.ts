/**
 * pion's module for the reference's `pi-coding-agent` (served by virtual-modules.ts, loaded with the first
 * import of it): its own names, completed with export-surface.ts's stand-ins.
 */
import { pionHome, VERSION } from "../../config.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize } from "../../tools/truncate.ts";
import { toolSetExports } from "./tool-sets.ts";
import { SessionManager } from "./session-manager.ts";
import { completeSurface } from "./export-surface.ts";
import { frontmatterExports } from "./plain-helpers.ts";
import * as text from "../text-helpers.ts";
import { toolFactoryExports } from "../tool-factories.ts";
import { TUI_MODULE_STAND_INS } from "../tui-stand-ins.ts";
import { compactionExports } from "./compaction-helpers.ts";
import { codingHelperExports } from "./coding-helpers.ts";
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

Object.assign(codingAgent, TUI_MODULE_STAND_INS.codingAgent);

export const PACKAGES: Record<string, Exports> = { "pi-coding-agent": completeSurface("pi-coding-agent", codingAgent) };
