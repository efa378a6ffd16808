import { isStorageError } from "../store/storage-error.ts";
import { addUsage, emptyUsage } from "../providers/event-stream.ts";
import type { Model, StreamFn, Usage } from "../providers/types.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { appendFileLists, buildSummaryRequest, estimateContextTokens, planCompaction, summarize, summarizePlan, type CompactionPlan, type FileOps } from "./compaction.ts";
import { estimateContext } from "./stats.ts";

export type CompactionReason = "manual" | "threshold" | "overflow";

export interface CompactionResult {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter: number;
  usage: Usage;
  details: FileOps;
}

export type CompactionEvent =
  | { type: "compaction_start"; reason: CompactionReason }
  | { type: "compaction_end"; reason: CompactionReason; result?: CompactionResult; aborted: boolean; willRetry: boolean; errorMessage?: string }
  | { type: "summarization_retry_scheduled"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: "summarization_retry_attempt_start"; source: "compaction"; reason: CompactionReason }
  | { type: "summarization_retry_attempt_start"; source: "branchSummary" }
  | { type: "summarization_retry_finished" };

/** What compaction needs from the session. */
export interface CompactionHost {
  model: Model;
  auth: { apiKey?: string; headers?: Record<string, string> };
  stream: StreamFn;
  branch(): Entry[];
  messages(): AgentMessage[];
  /** Commit the compaction entry (moves the leaf). */
  commit(entry: { type: "compaction"; summary: string; firstKeptEntryId: string; tokensBefore: number; details: unknown }): void;
  emit(e: CompactionEvent): void | Promise<void>;
  /** Usage of every summary request as it finishes, failed ones included (run limits count them). */
  addUsage?(usage: Usage): void;
  settings: { keepRecentTokens: number; retry: { enabled: boolean; maxRetries: number; baseDelayMs: number; maxAgentDelayMs?: number } };
}

export const NOTHING_TO_COMPACT = "Nothing to compact (session too small)";
const TRUNCATED_FAILED = "Truncated response recovery failed";

/**
 * How many recent tokens a compaction keeps verbatim. An automatic one keeps at most a
 * quarter of the model's window, so the compacted context lands well below the threshold
 * (it would fire again at once otherwise) and a request that overflowed fits when retried.
 */
export function keepBudget(reason: CompactionReason, keepRecentTokens: number, contextWindow: number): number {
  if (reason === "manual" || contextWindow <= 0) return keepRecentTokens;
  return Math.min(keepRecentTokens, Math.floor(contextWindow / 4));
}

/** Why overflow recovery cannot help: what would be sent still exceeds the model's window. */
export function overflowMessage(model: Model, estimatedTokens: number, afterCompaction: boolean): string {
  const what = afterCompaction ? "the compacted context" : "the part of the context that compaction would keep";
  return `${what} alone (about ${estimatedTokens} tokens, estimated) does not fit the context window of ${model.provider}/${model.id} (${model.contextWindow} tokens)`;
}

/**
 * What a compaction would summarize and keep, or undefined when there is nothing to summarize.
 * A request that overflowed cuts at the newest possible point rather than give up; a
 * tentative compaction (for a reply cut off early, which may not be context pressure at all)
 * keeps the recent part as the threshold does.
 */
export function planFor(branch: readonly Entry[], reason: CompactionReason, keepRecentTokens: number, model: Model, tentative = false): CompactionPlan | undefined {
  return planCompaction(branch, keepBudget(reason, keepRecentTokens, model.contextWindow), { fallbackToNewest: reason === "overflow" && !tentative });
}

/**
 * Summarize the older part of the branch and commit a compaction entry. Emits
 * compaction_start/compaction_end (and summarization retry events). When the cut splits
 * a turn, the turn's first part gets a summary of its own, joined to the history summary
 * under SPLIT_TURN_MARKER. Throws a PionError when there is nothing to compact, the kept
 * part alone would overflow (reason overflow), a summary failed, the entry could not be
 * written, or it was aborted; compaction_end carries the error and no entry is written then.
 * A threshold or `tentative` compaction with nothing to compact throws (code
 * nothing_to_compact) without emitting anything. `willRetry` (compaction_end's): whether the
 * request that overflowed is sent again afterwards.
 */
export async function compact(
  host: CompactionHost,
  reason: CompactionReason,
  signal: AbortSignal,
  customInstructions?: string,
  tentative = false,
  willRetry = reason === "overflow",
): Promise<CompactionResult> {
  const branch = host.branch();
  const plan = planFor(branch, reason, host.settings.keepRecentTokens, host.model, tentative);
  if (!plan && (reason === "threshold" || tentative)) throw new PionError(NOTHING_TO_COMPACT, "nothing_to_compact");
  await host.emit({ type: "compaction_start", reason });
  let ended = false;
  const fail = async (message: string, aborted: boolean, code = aborted ? "aborted" : "compaction_failed"): Promise<never> => {
    ended = true;
    const prefix = tentative ? TRUNCATED_FAILED : reason === "overflow" ? "Context overflow recovery failed" : "Compaction failed";
    await host.emit({ type: "compaction_end", reason, aborted, willRetry: false, errorMessage: aborted ? undefined : `${prefix}: ${message}` });
    throw new PionError(message, code);
  };
  try {
    if (!plan) {
      if (reason !== "overflow") return await fail(NOTHING_TO_COMPACT, false);
      return await fail(overflowMessage(host.model, estimateContextTokens(host.messages()), false), false, "context_overflow");
    }
    if (reason === "overflow" && !tentative && host.model.contextWindow > 0 && plan.keptTokens > host.model.contextWindow) {
      return await fail(overflowMessage(host.model, plan.keptTokens, false), false, "context_overflow");
    }
    const tokensBefore = estimateContext(branch);
    const out = await writeSummary(host, plan, reason, signal, customInstructions);
    if ("error" in out) return await fail(out.error, out.aborted || signal.aborted);
    if (signal.aborted) return await fail("Compaction aborted", true);
    const summary = appendFileLists(out.summary, plan.fileOps);
    host.commit({ type: "compaction", summary, firstKeptEntryId: plan.firstKeptEntryId, tokensBefore, details: { ...plan.fileOps, usage: out.usage } });
    const result: CompactionResult = {
      summary,
      firstKeptEntryId: plan.firstKeptEntryId,
      tokensBefore,
      estimatedTokensAfter: estimateContextTokens(host.messages()),
      usage: out.usage,
      details: plan.fileOps,
    };
    await host.emit({ type: "compaction_end", reason, result, aborted: false, willRetry });
    return result;
  } catch (err) {
    if (ended) throw err;
    // Not the summary's failure but pion's (the entry could not be written, a hook threw); a disk
    // that refused the entry keeps its code, so the run ends before another request.
    return fail(errorMessage(err), signal.aborted, isStorageError(err) ? err.code : undefined);
  }
}

/** After a compact-and-retry the request still overflowed: report it as a failed overflow compaction. */
export async function reportOverflowAgain(host: Pick<CompactionHost, "emit" | "model" | "messages">): Promise<string> {
  const message = overflowMessage(host.model, estimateContextTokens(host.messages()), true);
  await host.emit({ type: "compaction_start", reason: "overflow" });
  await host.emit({ type: "compaction_end", reason: "overflow", aborted: false, willRetry: false, errorMessage: `Context overflow recovery failed: ${message}` });
  return message;
}

/** After a compact-and-retry the reply was cut off early again: report it as a failed overflow compaction; the reply stands. */
export async function reportTruncatedAgain(host: Pick<CompactionHost, "emit">): Promise<void> {
  await host.emit({ type: "compaction_start", reason: "overflow" });
  await host.emit({ type: "compaction_end", reason: "overflow", aborted: false, willRetry: false, errorMessage: `${TRUNCATED_FAILED} after one compact-and-retry attempt.` });
}

type Written = { summary: string; usage: Usage } | { error: string; aborted: boolean; usage: Usage };

/** The history summary, and for a split turn the summary of the turn's first part after the marker. */
async function writeSummary(
  host: CompactionHost,
  plan: CompactionPlan,
  reason: CompactionReason,
  signal: AbortSignal,
  customInstructions?: string,
): Promise<Written> {
  const usage = emptyUsage();
  const run = async (messages: AgentMessage[], turnPrefix: boolean) => {
    const req = buildSummaryRequest({
      model: host.model,
      apiKey: host.auth.apiKey,
      authHeaders: host.auth.headers,
      messages,
      previousSummary: turnPrefix ? undefined : plan.previousSummary,
      customInstructions,
      turnPrefix,
    });
    const out = await summarize(host.stream, req, signal, {
      ...host.settings.retry,
      onScheduled: (attempt, maxAttempts, delayMs, errorMessage) =>
        void host.emit({ type: "summarization_retry_scheduled", attempt, maxAttempts, delayMs, errorMessage }),
      onAttemptStart: () => void host.emit({ type: "summarization_retry_attempt_start", source: "compaction", reason }),
      onFinished: () => void host.emit({ type: "summarization_retry_finished" }),
    });
    addUsage(usage, out.usage);
    host.addUsage?.(out.usage);
    return out;
  };
  const out = await summarizePlan<{ error: string; aborted: boolean; usage: Usage }>(plan, run);
  return "error" in out ? { ...out, usage } : { summary: out.summary, usage };
}
