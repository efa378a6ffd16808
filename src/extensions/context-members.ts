/**
 * The members of `ctx` and `pi` that reach the session itself (types.ts `SessionControl`), with
 * the reference's semantics: `ctx.sessionManager` (a read-only view of the session tree),
 * `ctx.getContextUsage`, `ctx.compact` (not awaited; `onComplete` / `onError`),
 * `ctx.getSystemPrompt`, `ctx.signal`; in commands `ctx.newSession`, `ctx.switchSession`,
 * `ctx.fork`, `ctx.navigateTree`, `ctx.reload`; `pi.getActiveTools`, `getAllTools`,
 * `setActiveTools`, `getThinkingLevel`, `setThinkingLevel`, `setModel`. Before the session exists
 * (while extensions load) reads answer empty and changes throw "the session is not ready yet".
 */
import { dirname } from "node:path";
import { MCP_HOST, type ExtensionSessionPort, type SessionControl } from "./types.ts";

type Entry = { id: string; parentId: string | null; type: string; label?: string; targetId?: string };

const must = (port: ExtensionSessionPort): SessionControl => {
  const c = port.control?.();
  if (!c) throw new Error("the session is not ready yet");
  return c;
};

/** `ctx.sessionManager`: what the reference's ReadonlySessionManager offers, over pion's session. */
export function sessionManagerView(port: ExtensionSessionPort) {
  const c = () => port.control?.();
  const entries = (): Entry[] => (c()?.entries() ?? []) as Entry[];
  const labels = () => {
    const out = new Map<string, string>();
    for (const e of entries()) if (e.type === "label" && e.targetId) (e.label ? out.set(e.targetId, e.label) : out.delete(e.targetId));
    return out;
  };
  return {
    getCwd: () => port.cwd,
    getSessionFile: () => c()?.file(),
    getSessionDir: () => {
      const file = c()?.file();
      return file ? dirname(file) : undefined;
    },
    getSessionId: () => c()?.sessionId(),
    getSessionName: () => c()?.name(),
    getHeader: () => c()?.header(),
    getEntries: () => entries(),
    getEntry: (id: string) => c()?.entry(id),
    getLeafId: () => c()?.leafId() ?? null,
    getLeafEntry: () => {
      const leaf = c()?.leafId();
      return leaf ? c()?.entry(leaf) : undefined;
    },
    getBranch: (fromId?: string) => c()?.branch(fromId) ?? [],
    getLabel: (id: string) => labels().get(id),
    getTree: () => {
      const all = entries();
      const nodes = new Map(all.map((e) => [e.id, { entry: e, children: [] as unknown[], label: undefined as string | undefined }]));
      const byLabel = labels();
      const roots: unknown[] = [];
      for (const e of all) {
        const node = nodes.get(e.id)!;
        node.label = byLabel.get(e.id);
        const parent = e.parentId ? nodes.get(e.parentId) : undefined;
        (parent ? parent.children : roots).push(node);
      }
      return roots;
    },
  };
}

/** The `ctx` members every handler gets. */
export function contextMembers(port: ExtensionSessionPort) {
  return {
    sessionManager: sessionManagerView(port),
    get scopedModels(): unknown[] {
      return port.control?.()?.scopedModels() ?? [];
    },
    get signal(): AbortSignal | undefined {
      return port.control?.()?.signal();
    },
    getContextUsage: () => port.control?.()?.contextUsage(),
    getSystemPrompt: () => port.control?.()?.systemPrompt() ?? "",
    compact: (options?: { customInstructions?: string; onComplete?: (r: unknown) => void; onError?: (e: Error) => void }) => {
      void (async () => must(port).compact(options?.customInstructions))().then(
        (result) => options?.onComplete?.(result),
        (err: unknown) => options?.onError?.(err instanceof Error ? err : new Error(String(err))),
      );
    },
  };
}

const cancelledOf = (r: unknown): { cancelled: boolean } => ({ cancelled: !!(r && typeof r === "object" && (r as { cancelled?: unknown }).cancelled) });

/** The `ctx` members of command handlers: the session commands a user could run. */
export function commandMembers(port: ExtensionSessionPort, replaced: () => unknown) {
  const after = async (r: unknown, withSession?: (ctx: unknown) => Promise<void>) => {
    const out = cancelledOf(r);
    if (!out.cancelled && withSession) await withSession(replaced());
    return out;
  };
  return {
    newSession: async (o?: { parentSession?: string; withSession?: (ctx: unknown) => Promise<void> }) =>
      after(await must(port).command("new_session", o?.parentSession ? { parentSession: o.parentSession } : {}), o?.withSession),
    switchSession: async (sessionPath: string, o?: { withSession?: (ctx: unknown) => Promise<void> }) =>
      after(await must(port).command("switch_session", { sessionPath }), o?.withSession),
    fork: async (entryId: string, o?: { withSession?: (ctx: unknown) => Promise<void> }) => after(await must(port).command("fork", { entryId }), o?.withSession),
    // The session asks and tells extensions itself (session_before_tree, session_tree); a command
    // learns only whether it moved, as in the reference's RPC and print modes.
    navigateTree: async (targetId: string, o?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string }) =>
      cancelledOf(await must(port).navigate(targetId, o && { summarize: o.summarize, customInstructions: o.customInstructions, replaceInstructions: o.replaceInstructions, label: o.label })),
    reload: () => must(port).reload(),
  };
}

/** The `pi` members over the session's tools, model and thinking level. */
export function apiMembers(port: ExtensionSessionPort) {
  return {
    getActiveTools: (): string[] => port.control?.()?.activeTools() ?? [],
    getAllTools: () => port.control?.()?.allTools() ?? [],
    setActiveTools: (names: string[]) => {
      if (!Array.isArray(names) || names.some((n) => typeof n !== "string")) throw new TypeError("pi.setActiveTools takes a list of tool names");
      must(port).setActiveTools(names);
    },
    getThinkingLevel: () => port.control?.()?.thinkingLevel() ?? "off",
    setThinkingLevel: (level: string) => must(port).setThinkingLevel(level),
    setModel: async (model: { provider?: unknown; id?: unknown }) => {
      if (!model || typeof model.provider !== "string" || typeof model.id !== "string") return false;
      return must(port).setModel(model.provider, model.id);
    },
    [MCP_HOST]: () => port.mcp?.(),
  };
}
