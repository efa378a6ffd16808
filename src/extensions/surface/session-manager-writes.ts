/**
 * The writes of a writable SessionManager (session-manager.ts): each `append*` adds an entry
 * under the leaf and moves the leaf to it, then hands it to the session file when there is one
 * (an entry the file could not take is taken back, so no later entry points at a missing parent,
 * as in the reference); `branch` / `resetLeaf` move the leaf; `newSession` starts over and
 * `createBranchedSession` keeps one branch, each under a new session id (and, when persisted, a
 * new file in the session folder, which they return).
 */
import { join } from "node:path";
import { sessionFileName } from "../../store/paths.ts";
import { shortId } from "../../util/id.ts";
import type { FileEntry as Entry, SessionFile } from "./session-manager-file.ts";

type Rec = Record<string, unknown>;

/** The manager's state its reads and writes share. */
export interface ManagerState {
  header: Rec;
  leaf: string | null;
  entries: Entry[];
  byId: Map<string, Entry>;
  cwd: string;
  /** Where new session files go ("" for an in-memory manager). */
  sessionDir: string;
  file: SessionFile | undefined;
}

export const newHeader = (cwd: string, parentSession?: string, id?: string): Rec => ({
  type: "session",
  version: 3,
  id: id ?? crypto.randomUUID(),
  timestamp: new Date().toISOString(),
  cwd,
  ...(parentSession === undefined ? {} : { parentSession }),
});

/** The current label of each entry: the newest label entry for it, an empty one removing it. */
function labelsOf(entries: readonly Entry[]): Map<string, { label: string; timestamp: unknown }> {
  const out = new Map<string, { label: string; timestamp: unknown }>();
  for (const e of entries) {
    if (e.type !== "label" || typeof e.targetId !== "string") continue;
    if (e.label) out.set(e.targetId, { label: String(e.label), timestamp: e.timestamp });
    else out.delete(e.targetId);
  }
  return out;
}

/**
 * The path from the root to `leafId` without its label entries (each kept entry re-parented onto
 * the one before it, a compaction's first kept entry moved off a dropped label), then a label
 * entry for each kept entry that has a label now.
 */
function branchCopy(entries: readonly Entry[], byId: Map<string, Entry>, leafId: string): Entry[] {
  const path: Entry[] = [];
  for (let e = byId.get(leafId); e; e = e.parentId ? byId.get(e.parentId) : undefined) path.unshift(e);
  if (path.length === 0) throw new Error(`Entry ${leafId} not found`);
  const kept: Entry[] = [];
  const movedTo = new Map<string, string>();
  let pendingLabels: string[] = [];
  for (const e of path) {
    if (e.type === "label") {
      pendingLabels.push(e.id);
      continue;
    }
    for (const id of pendingLabels) movedTo.set(id, e.id);
    pendingLabels = [];
    const parentId = kept.at(-1)?.id ?? null;
    const firstKept = e.firstKeptEntryId as string | undefined;
    kept.push(e.type === "compaction" && firstKept ? { ...e, parentId, firstKeptEntryId: movedTo.get(firstKept) ?? firstKept } : { ...e, parentId });
  }
  const ids = new Map(kept.map((e) => [e.id, e]));
  for (const [targetId, { label, timestamp }] of labelsOf(entries)) {
    if (!ids.has(targetId)) continue;
    const entry: Entry = { type: "label", id: shortId(ids), parentId: kept.at(-1)?.id ?? null, timestamp, targetId, label };
    ids.set(entry.id, entry);
    kept.push(entry);
  }
  return kept;
}

export function managerWrites(s: ManagerState): Record<string, (...args: never[]) => unknown> {
  const replace = (next: Entry[], header: Rec) => {
    s.entries.splice(0, s.entries.length, ...next);
    s.byId.clear();
    for (const e of next) s.byId.set(e.id, e);
    s.header = header;
    s.leaf = next.at(-1)?.id ?? null;
  };
  const newFile = (header: Rec) => join(s.sessionDir, sessionFileName(String(header.timestamp), String(header.id)));
  const append = (type: string, fields: Rec): string => {
    const entry: Entry = { type, id: shortId(s.byId), parentId: s.leaf, timestamp: new Date().toISOString(), ...fields };
    const previousLeaf = s.leaf;
    s.entries.push(entry);
    s.byId.set(entry.id, entry);
    s.leaf = entry.id;
    try {
      s.file?.persist(s.header, s.entries, entry);
    } catch (err) {
      s.entries.pop();
      s.byId.delete(entry.id);
      s.leaf = previousLeaf;
      throw err;
    }
    return entry.id;
  };
  return {
    appendMessage: (message: unknown) => append("message", { message }),
    appendThinkingLevelChange: (thinkingLevel: string) => append("thinking_level_change", { thinkingLevel }),
    appendModelChange: (provider: string, modelId: string) => append("model_change", { provider, modelId }),
    appendCustomEntry: (customType: string, data?: unknown) => append("custom", { customType, ...(data === undefined ? {} : { data }) }),
    appendCustomMessageEntry: (customType: string, content: unknown, display: boolean, details?: unknown) =>
      append("custom_message", { customType, content, display, ...(details === undefined ? {} : { details }) }),
    appendSessionInfo: (name: string) => append("session_info", { name: name.replace(/[\r\n]+/g, " ").trim() }),
    appendLabelChange: (targetId: string, label: string | undefined) => {
      if (!s.byId.has(targetId)) throw new Error(`Entry ${targetId} not found`);
      return append("label", { targetId, label });
    },
    branch: (id: string) => {
      if (!s.byId.has(id)) throw new Error(`Entry ${id} not found`);
      s.leaf = id;
    },
    resetLeaf: () => {
      s.leaf = null;
    },
    /** Start over: a new session id and header, no entries; a persisted manager's new file (written with the first conversation entry). */
    newSession: (options?: { id?: string; parentSession?: string }) => {
      replace([], newHeader(s.cwd, options?.parentSession, options?.id));
      if (!s.file) return undefined;
      s.file.moveTo(newFile(s.header));
      return s.file.path;
    },
    /** Keep only the branch ending at `leafId`, under a new session id; a persisted manager's new file, whose parent is the old one. */
    createBranchedSession: (leafId: string) => {
      const kept = branchCopy(s.entries, s.byId, leafId);
      const previous = s.file?.path;
      replace(kept, newHeader(s.cwd, previous));
      if (!s.file) return undefined;
      s.file.startWith(newFile(s.header), s.header, s.entries);
      return s.file.path;
    },
  };
}
