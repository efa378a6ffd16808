import { cleanupSessionResources } from "../providers/session-resources.ts";
import type { AgentMessage, Entry, SessionHeader } from "../store/entries.ts";
import type { SessionCache, SessionStore } from "../store/store.ts";
import { errorMessage } from "../util/errors.ts";
import type { JsonPiece } from "../util/json-pieces.ts";
import { log } from "../util/log.ts";
import { lastAssistantText } from "./context.ts";
import { SessionTree, type EntryInput, type PlannedSession } from "./tree.ts";

/**
 * A session's entries as AgentSession shows them: the tree owns them (see SessionTree), and these
 * are the session's view of it, apart from the run, queues and settings in session.ts.
 */
export abstract class SessionEntries {
  protected readonly tree: SessionTree;

  constructor(store: SessionStore, cwd: string, fileFor: (h: SessionHeader) => string | undefined) {
    this.tree = new SessionTree(store, cwd, fileFor, () => this.summarySettings());
  }

  /** The model and thinking level to record in the session's summary when it is left. */
  protected abstract summarySettings(): Pick<SessionCache, "model" | "thinkingLevel">;

  openStored(sessionId: string): void {
    this.tree.openStored(sessionId);
  }

  branchInto(entries: Entry[], id?: string | PlannedSession): void {
    this.tree.branchInto(entries, id);
  }

  /** A session to start next and its file (tree.ts `plan`). */
  planSession(): ReturnType<SessionTree["plan"]> {
    return this.tree.plan();
  }

  /** The session ends here (the process exits, or its host lets it go): its lock, summary and per-session resources are released. */
  release(): void {
    const id = this.tree.header?.id;
    this.tree.release();
    if (id !== undefined) this.releaseResources(id);
  }

  /**
   * What providers and extensions keep for session `sessionId` is cleaned up (pi-ai's
   * cleanupSessionResources), once the host has left that session. Never throws: a failed cleanup is logged.
   */
  releaseResources(sessionId: string): void {
    try {
      cleanupSessionResources(sessionId);
    } catch (err) {
      const errors = err instanceof AggregateError ? err.errors : [err];
      log("session", "a session resource cleanup failed", { sessionId, errors: errors.map(errorMessage) });
    }
  }

  get header(): SessionHeader {
    return this.tree.header;
  }

  get file(): string | undefined {
    return this.tree.file;
  }

  get name(): string | undefined {
    return this.tree.name;
  }

  get sessionId(): string {
    return this.tree.sessionId;
  }

  get leaf(): string | null {
    return this.tree.leaf;
  }

  get isStored(): boolean {
    return this.tree.isStored;
  }

  entries(): Entry[] {
    return this.tree.entries();
  }

  getEntry(id: string): Entry | undefined {
    return this.tree.get(id);
  }

  protected append(partial: EntryInput, granted?: readonly string[]): Entry {
    return this.tree.append(partial, granted);
  }

  /**
   * The allow rules this pion's permission gate granted in the session (with `record`), in grant
   * order. Never read from entries: a session file from elsewhere grants nothing.
   */
  grantedRules(): string[] {
    return this.tree.grantedRules().map((g) => g.rule);
  }

  setLeaf(leafId: string | null): void {
    this.tree.setLeaf(leafId);
  }

  branchPath(): Entry[] {
    return this.tree.branchPath();
  }

  messages(): AgentMessage[] {
    return this.tree.messages();
  }

  /** The tree as JSON text pieces, read from the store as they are written (see SessionTree). */
  treeJson(): Iterable<JsonPiece> {
    return this.tree.treeJson();
  }

  /** The context as JSON text pieces, read from the store as they are written (see SessionTree). */
  messagesJson(): Iterable<JsonPiece> {
    return this.tree.messagesJson();
  }

  lastAssistantText(): string | null {
    return lastAssistantText(this.messages());
  }
}
