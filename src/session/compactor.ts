import type { LlmRequest, Model, StreamFn, Usage } from "../providers/types.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";
import { PionError } from "../util/errors.ts";
import { buildSummaryRequest, estimateContextTokens, planCompaction, summarize, type FileOps } from "./compaction.ts";
import { contextTokens } from "./stats.ts";

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
  | { type: "summarization_retry_finished" };

/** What compaction needs from the session. */
export interface CompactionHost {
  model: Model;
  apiKey: string | undefined;
  stream: StreamFn;
  branch(): Entry[];
  messages(): AgentMessage[];
  /** Commit the compaction entry (moves the leaf). */
  commit(entry: { type: "compaction"; summary: string; firstKeptEntryId: string; tokensBefore: number; details: unknown }): void;
  emit(e: CompactionEvent): void | Promise<void>;
  settings: { keepRecentTokens: number; retry: { enabled: boolean; maxRetries: number; baseDelayMs: number } };
}

/**
 * Summarize the older part of the branch and commit a compaction entry. Emits
 * compaction_start/compaction_end (and summarization retry events). Throws a PionError
 * when there is nothing to compact, the summary failed, or it was aborted; no entry is
 * written then.
 */
export async function compact(
  host: CompactionHost,
  reason: CompactionReason,
  signal: AbortSignal,
  customInstructions?: string,
): Promise<CompactionResult> {
  await host.emit({ type: "compaction_start", reason });
  const fail = async (message: string, aborted: boolean): Promise<never> => {
    await host.emit({ type: "compaction_end", reason, aborted, willRetry: false, errorMessage: aborted ? undefined : `Compaction failed: ${message}` });
    throw new PionError(message, aborted ? "aborted" : "compaction_failed");
  };
  const branch = host.branch();
  const plan = planCompaction(branch, host.settings.keepRecentTokens);
  if (!plan) return fail("Nothing to compact (session too small)", false);
  const tokensBefore = contextTokens(branch) ?? estimateContextTokens(host.messages());
  const req: LlmRequest = buildSummaryRequest({
    model: host.model,
    apiKey: host.apiKey,
    messages: plan.messages,
    previousSummary: plan.previousSummary,
    customInstructions,
  });
  const out = await summarize(host.stream, req, signal, {
    ...host.settings.retry,
    onScheduled: (attempt, maxAttempts, delayMs, errorMessage) =>
      void host.emit({ type: "summarization_retry_scheduled", attempt, maxAttempts, delayMs, errorMessage }),
    onAttemptStart: () => void host.emit({ type: "summarization_retry_attempt_start", source: "compaction", reason }),
    onFinished: () => void host.emit({ type: "summarization_retry_finished" }),
  });
  if ("error" in out) return fail(out.error, out.aborted || signal.aborted);
  if (signal.aborted) return fail("Compaction aborted", true);
  const details = { ...plan.fileOps, usage: out.usage };
  host.commit({ type: "compaction", summary: out.summary, firstKeptEntryId: plan.firstKeptEntryId, tokensBefore, details });
  const result: CompactionResult = {
    summary: out.summary,
    firstKeptEntryId: plan.firstKeptEntryId,
    tokensBefore,
    estimatedTokensAfter: estimateContextTokens(host.messages()),
    usage: out.usage,
    details: plan.fileOps,
  };
  await host.emit({ type: "compaction_end", reason, result, aborted: false, willRetry: reason === "overflow" });
  return result;
}
