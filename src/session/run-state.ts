import { emptyUsage } from "../providers/event-stream.ts";
import { isContextOverflow } from "../providers/overflow.ts";
import { isRetryableAssistantError } from "../providers/retryable.ts";
import type { AssistantMessage, Model, Usage } from "../providers/types.ts";
import type { CustomMessage } from "../store/entries.ts";
import { overrunOf } from "./compaction.ts";
import { limitReached, type RunLimits } from "./limits.ts";

export function customMessage(m: { customType: string; content: string | unknown[]; display?: boolean; details?: unknown }): CustomMessage {
  const message: CustomMessage = {
    role: "custom",
    customType: m.customType,
    content: m.content as string,
    display: m.display ?? true,
    timestamp: Date.now(),
  };
  if (m.details !== undefined) message.details = m.details;
  return message;
}

export function freshRetry() {
  return {
    attempt: 0,
    pending: false,
    exhausted: false,
    lastError: "",
    failedEntryId: undefined as string | undefined,
    cancel: undefined as AbortController | undefined,
  };
}

export interface RecoveryPolicy {
  autoRetry: boolean;
  autoCompaction: boolean;
  maxRetries: number;
  /** Limits of the model that wrote the message; without them only the provider's overflow error counts. */
  model?: Pick<Model, "contextWindow" | "maxTokens">;
  /** Whether a compaction would find something to summarize before retrying a truncated reply. */
  canCompact?: () => boolean;
}

/** How a run ended, as prompt_result and agent_settled report it. */
export interface RunOutcome {
  stopReason: string;
  aborted: boolean;
  errorMessage?: string;
}

/**
 * One run's bookkeeping: the commands waiting for its prompt_result, the usage and number of
 * its model calls (every request, retries and compaction summaries included), its limits,
 * and what the session decided at each agent_end (retry, compact on overflow, stop).
 */
export class RunState {
  usage: Usage = emptyUsage();
  calls = 0;
  systemPrompt?: string;
  retry = freshRetry();
  /**
   * pending: the last attempt overflowed the context (silently: a completed reply to keep), or
   * is a truncated reply compacting may help (see overrunOf); tried: a compact-and-retry already ran.
   */
  overflow = { pending: undefined as "overflow" | "silent" | "truncated" | undefined, tried: false };
  /** Set once a limit stopped the run: the message naming it. */
  limitHit?: string;
  /** The run's own last assistant message (never an earlier run's). */
  assistant?: AssistantMessage;
  /** The failed attempt the next request retries (after a retry wait or overflow recovery), until that request is built. */
  resend?: AssistantMessage;
  /** Why the run stopped when pion itself failed (store, hook) or overflow recovery could not help. */
  failure?: string;
  /** How the run ended, once it settled. */
  result?: RunOutcome;

  constructor(
    readonly ids: string[],
    readonly limits: RunLimits,
  ) {}

  /** True (and `limitHit` set) when the run may not make another model call. */
  atLimit(): boolean {
    this.limitHit ??= limitReached(this.limits, this.calls, this.usage.cost.total);
    return this.limitHit !== undefined;
  }

  /**
   * At agent_end: whether the session retries (a transient error), compacts and retries (the
   * context overflowed, or a reply was cut off early and there is something to compact),
   * compacts and keeps the reply (it completed although its prompt overflowed), or lets the run
   * end. A reply truncated at the output limit ends it. Returns the event's `willRetry`.
   */
  decide(last: AssistantMessage | undefined, lastEntryId: string | undefined, policy: RecoveryPolicy): boolean {
    const failed = last?.stopReason === "error" ? last : undefined;
    // An overflow is compaction's to handle, never retried as it is (also with auto-compaction off).
    const transient = failed !== undefined && policy.autoRetry && !isContextOverflow(failed, policy.model?.contextWindow) && isRetryableAssistantError(failed);
    const overrun = last !== undefined && policy.autoCompaction ? overrunOf(last, policy.model) : undefined;
    // A truncated reply stands when compacting cannot free room; after one retry it is reported.
    const pending = overrun === "truncated" && !this.overflow.tried && !(policy.canCompact?.() ?? false) ? undefined : overrun;
    this.overflow.pending = pending;
    const recovers = pending !== undefined && pending !== "silent" && !this.overflow.tried;
    const retryable = transient && this.retry.attempt < policy.maxRetries;
    this.retry.pending = retryable;
    this.retry.exhausted = transient && !retryable;
    if (failed) {
      this.retry.lastError = failed.errorMessage ?? "unknown error";
      this.retry.failedEntryId = lastEntryId;
    }
    return (retryable || recovers) && !this.atLimit();
  }

  outcome(aborted: boolean, failure: string | undefined, last: AssistantMessage | undefined): RunOutcome {
    if (aborted) return { stopReason: "aborted", aborted: true };
    if (failure !== undefined) return { stopReason: "error", aborted: false, errorMessage: failure };
    if (this.limitHit !== undefined) return { stopReason: "limit", aborted: false, errorMessage: this.limitHit };
    const out: RunOutcome = { stopReason: last?.stopReason ?? "stop", aborted: false };
    if (last?.errorMessage) out.errorMessage = last.errorMessage;
    return out;
  }
}
