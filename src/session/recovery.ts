import { isStorageError } from "../store/storage-error.ts";
import { addUsage } from "../providers/event-stream.ts";
import { isContextOverflow } from "../providers/overflow.ts";
import { cancellableSleep, retryDelayMs } from "../providers/retryable.ts";
import type { AssistantMessage, Model, StreamFn } from "../providers/types.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { shouldCompact } from "./compaction.ts";
import { compact, planFor, reportOverflowAgain, reportTruncatedAgain, type CompactionReason, type CompactionResult } from "./compactor.ts";
import type { RunState } from "./run-state.ts";
import type { SessionEvent } from "./session-types.ts";
import { contextTokens } from "./stats.ts";
import type { EntryInput } from "./tree.ts";

/** What compaction and recovery need from the session. */
export interface RecoveryHost {
  model(): Model | undefined;
  autoRetry(): boolean;
  autoCompaction(): boolean;
  requestAuth(provider: string, signal?: AbortSignal): Promise<{ apiKey?: string; headers?: Record<string, string> }>;
  /** The session's counted stream: summary requests count as the run's model calls. */
  stream: StreamFn;
  branch(): Entry[];
  messages(): AgentMessage[];
  append(entry: EntryInput): Entry;
  emit(e: SessionEvent): void | Promise<void>;
  /** The run in progress (or the last one). */
  run(): RunState;
  lastAssistant(): AssistantMessage | undefined;
  /** Id of the newest message entry: the failed attempt, at agent_end. */
  lastMessageEntryId(): string | undefined;
  settings: {
    compaction: { reserveTokens: number; keepRecentTokens: number };
    retry: { maxRetries: number; baseDelayMs: number; maxAgentDelayMs?: number };
  };
}

/**
 * The session's compactions (manual, at the threshold, on overflow) and what a run does
 * after a failed model call: wait and retry a transient error, or compact and retry a
 * request that overflowed the context.
 */
export class Recovery {
  /** True while a compaction summary is being written. */
  isCompacting = false;

  constructor(private readonly host: RecoveryHost) {}

  /**
   * `leaveOut`: the entry of a reply cut off early, compacted for tentatively: planned as if
   * it had left the context (it leaves only once the compaction is written). `keepsReply`: an
   * overflow compaction after a completed reply, which is not retried.
   */
  async compact(reason: CompactionReason, signal: AbortSignal, customInstructions?: string, leaveOut?: string, keepsReply = false): Promise<CompactionResult> {
    const h = this.host;
    const model = h.model()!;
    this.isCompacting = true;
    try {
      return await compact(
        {
          model,
          auth: await h.requestAuth(model.provider, signal),
          stream: h.stream,
          branch: () => this.branchWithout(leaveOut),
          messages: () => h.messages(),
          commit: (entry) => void h.append(entry),
          emit: (e) => h.emit(e),
          addUsage: (usage) => addUsage(h.run().usage, usage),
          settings: { keepRecentTokens: h.settings.compaction.keepRecentTokens, retry: { enabled: h.autoRetry(), ...h.settings.retry } },
        },
        reason,
        signal,
        customInstructions,
        leaveOut !== undefined,
        reason === "overflow" && !keepsReply,
      );
    } finally {
      this.isCompacting = false;
    }
  }

  /**
   * Auto-compaction at the threshold. A failure (other than nothing to compact, which is
   * quiet) is reported in compaction_end and on stderr, and the run goes on.
   */
  async compactIfFull(signal: AbortSignal): Promise<boolean> {
    const model = this.host.model();
    if (!this.host.autoCompaction() || !model || signal.aborted) return false;
    if (!shouldCompact(contextTokens(this.host.branch()), model.contextWindow, this.host.settings.compaction.reserveTokens)) return false;
    try {
      await this.compact("threshold", signal);
      return true;
    } catch (err) {
      const code = err instanceof PionError ? err.code : undefined;
      // The session cannot be saved: no turn may start on it.
      if (isStorageError(err)) throw err;
      if (code !== "nothing_to_compact" && code !== "aborted") log("session", "threshold compaction failed", { error: errorMessage(err) });
      return false;
    }
  }

  /**
   * Whether a compaction for the reply just cut off early would summarize anything. Only when
   * that reply is the newest message: it is what leaves the context for the retry.
   */
  canCompactTruncated(): boolean {
    const model = this.host.model();
    const id = this.host.lastMessageEntryId();
    if (!model || id === undefined) return false;
    const newest = this.host.branch().findLast((e) => e.id === id);
    if (newest?.type !== "message" || newest.message.role !== "assistant") return false;
    return planFor(this.branchWithout(id), "overflow", this.host.settings.compaction.keepRecentTokens, model, true) !== undefined;
  }

  /**
   * The last attempt overflowed the context: take it out of the context, compact once with
   * reason overflow, and tell the caller to run the request again (`retry`). Without a retry,
   * `failure` is the run's error when recovery cannot help (the kept part alone overflows, or
   * the request overflowed again after compacting). A reply cut off early (`truncated`) is
   * compacted for once, tentatively; whatever happens then, it is never the run's error.
   */
  async recoverFromOverflow(signal: AbortSignal): Promise<{ retry: boolean; failure?: string }> {
    const h = this.host;
    const run = h.run();
    const last = h.lastAssistant();
    const failedId = h.lastMessageEntryId();
    if (run.overflow.pending === "truncated") return this.retryTruncated(signal, failedId);
    if (run.overflow.pending === "silent") return this.compactKeepingReply(signal);
    if (run.overflow.tried) {
      // Compacting once did not make the request fit: the compacted context itself is too large.
      const model = h.model();
      if (!last || !model || !isContextOverflow(last, model.contextWindow)) return { retry: false };
      return { retry: false, failure: overflowFailure(await reportOverflowAgain({ model, messages: () => h.messages(), emit: (e) => h.emit(e) }), last) };
    }
    run.overflow.tried = true;
    if (run.atLimit()) return { retry: false };
    // The failed attempt leaves the context before the cut is chosen (it stays in the history).
    if (failedId) await this.omit(failedId);
    try {
      await this.compact("overflow", signal);
      return { retry: !signal.aborted };
    } catch (err) {
      if (signal.aborted) return { retry: false };
      const why = errorMessage(err);
      const failure = err instanceof PionError && err.code === "context_overflow" ? overflowFailure(why, last) : `Context overflow recovery failed: ${why}`;
      return { retry: false, failure };
    }
  }

  /**
   * A reply cut off below the output limit: compact once (nothing to compact leaves it quietly;
   * a failed summary is reported in compaction_end), then take the reply out of the context and
   * retry. The second time, compaction_end says recovery failed. The reply stands unless retried.
   */
  private async retryTruncated(signal: AbortSignal, replyId: string | undefined): Promise<{ retry: boolean }> {
    const run = this.host.run();
    if (run.overflow.tried) {
      await reportTruncatedAgain({ emit: (e) => this.host.emit(e) });
      return { retry: false };
    }
    run.overflow.tried = true;
    if (run.atLimit() || replyId === undefined) return { retry: false };
    try {
      await this.compact("overflow", signal, undefined, replyId);
    } catch (err) {
      const code = err instanceof PionError ? err.code : undefined;
      if (isStorageError(err)) throw err; // the session cannot be saved: the run ends with it
      if (code !== "nothing_to_compact" && code !== "aborted") log("session", "compaction for a truncated reply failed", { error: errorMessage(err) });
      return { retry: false };
    }
    await this.omit(replyId);
    return { retry: !signal.aborted };
  }

  /**
   * A reply that completed although its prompt exceeded the window: compact (reason overflow)
   * and keep the reply; nothing is retried. With nothing to compact the run ends quietly; a
   * failed compaction is reported in compaction_end and the run ends as the reply did.
   */
  private async compactKeepingReply(signal: AbortSignal): Promise<{ retry: false }> {
    const model = this.host.model();
    if (!model || this.host.run().atLimit()) return { retry: false };
    if (!planFor(this.host.branch(), "overflow", this.host.settings.compaction.keepRecentTokens, model, true)) return { retry: false };
    try {
      await this.compact("overflow", signal, undefined, undefined, true);
    } catch (err) {
      const code = err instanceof PionError ? err.code : undefined;
      if (isStorageError(err)) throw err; // the session cannot be saved: the run ends with it
      if (code !== "aborted") log("session", "compaction after a reply that overflowed the context failed", { error: errorMessage(err) });
    }
    return { retry: false };
  }

  /** The branch, `entryId` left out (a path compaction plans on; entries are not changed). */
  private branchWithout(entryId: string | undefined): Entry[] {
    const branch = this.host.branch();
    return entryId === undefined ? branch : branch.filter((e) => e.id !== entryId);
  }

  /** A transient failure: wait, then the caller runs again from the same context (no new prompt). */
  async waitToRetry(signal: AbortSignal): Promise<boolean> {
    const h = this.host;
    const retry = h.run().retry;
    const attempt = ++retry.attempt;
    const { maxRetries } = h.settings.retry;
    const delayMs = retryDelayMs(h.settings.retry, attempt);
    await h.emit({ type: "auto_retry_start", attempt, maxAttempts: maxRetries, delayMs, errorMessage: retry.lastError });
    // The failed attempt leaves the context (it stays in the session's history).
    if (retry.failedEntryId) await this.omit(retry.failedEntryId);
    const cancel = new AbortController();
    retry.cancel = cancel;
    const onAbort = () => cancel.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const waited = await cancellableSleep(delayMs, cancel.signal);
    signal.removeEventListener("abort", onAbort);
    retry.cancel = undefined;
    if (!waited) await h.emit({ type: "auto_retry_end", success: false, attempt, finalError: "Retry cancelled" });
    return waited;
  }

  private async omit(entryId: string): Promise<void> {
    const edit = this.host.append({ type: "context_edit", targetId: entryId, replacement: null });
    await this.host.emit({ type: "entry_appended", entry: edit });
  }
}

function overflowFailure(why: string, last: AssistantMessage | undefined): string {
  const provider = last?.errorMessage ? ` (provider: ${last.errorMessage})` : "";
  return `Context overflow: ${why}${provider}`;
}
