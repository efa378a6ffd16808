import { addUsage, emptyUsage } from "../providers/event-stream.ts";
import { isContextOverflow, isRecoverableLength } from "../providers/overflow.ts";
import { cancellableSleep, isRetryableAssistantError, retryDelayMs } from "../providers/retryable.ts";
import type { AssistantMessage, ImageContent, LlmRequest, Model, StreamFn, TextContent, ThinkingLevel, Usage } from "../providers/types.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";
import { NO_EARLIER_HISTORY, SPLIT_TURN_MARKER, SUMMARY_SYSTEM_PROMPT, branchSummaryPrompt, focusSuffix, freshSummaryPrompt, turnPrefixPrompt, updatedSummaryPrompt } from "./compaction-prompt.ts";
import { bashExecutionText } from "./context.ts";
import { effectiveMessages, findCutPoint, latestCompaction, type CutOptions, type CutPoint } from "./cut-point.ts";
import { estimateTokens } from "./stats.ts";

export interface FileOps {
  readFiles: string[];
  modifiedFiles: string[];
}

export interface CompactionPlan extends CutPoint {
  firstKeptEntryId: string;
  /** The history to summarize (before the split turn, if any), with context edits applied. */
  messages: AgentMessage[];
  /** When the turn is split: its part before the cut, summarized on its own. Empty otherwise. */
  turnPrefix: AgentMessage[];
  /** Estimated tokens of what stays verbatim (from the cut to the leaf). */
  keptTokens: number;
  /** Summary of the newest earlier compaction on the branch, to be merged into the new one. */
  previousSummary?: string;
  /** Files read and modified in `messages` and `turnPrefix`, merged with the earlier compaction's details. */
  fileOps: FileOps;
}

/** Everything a compaction needs from the branch, or undefined when there is nothing to summarize. */
export function planCompaction(path: readonly Entry[], keepRecentTokens: number, opts: CutOptions = {}): CompactionPlan | undefined {
  const cut = findCutPoint(path, keepRecentTokens, opts);
  if (!cut) return undefined;
  const all = effectiveMessages(path);
  const defined = (from: number, to: number) => all.slice(from, to).filter((m): m is AgentMessage => m !== undefined);
  const historyEnd = cut.splitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
  const messages = defined(cut.summarizeFrom, historyEnd);
  const turnPrefix = cut.splitTurn ? defined(cut.turnStartIndex, cut.firstKeptIndex) : [];
  const previous = latestCompaction(path);
  return {
    ...cut,
    firstKeptEntryId: path[cut.firstKeptIndex]!.id,
    messages,
    turnPrefix,
    keptTokens: estimateContextTokens(defined(cut.firstKeptIndex, all.length)),
    ...(previous ? { previousSummary: previous.entry.summary } : {}),
    fileOps: collectFileOps([...messages, ...turnPrefix], previous ? readFileOps(previous.entry.details) : undefined),
  };
}

/**
 * Files the assistant read (`read`) and changed (`write`, `edit`), sorted and unique,
 * merged with `previous`. A file that was both read and changed is listed as modified only.
 */
export function collectFileOps(messages: readonly AgentMessage[], previous?: FileOps): FileOps {
  const read = new Set(previous?.readFiles ?? []);
  const modified = new Set(previous?.modifiedFiles ?? []);
  for (const m of messages) {
    for (const { tool, path } of fileTouches(m)) (tool === "read" ? read : modified).add(path);
  }
  for (const p of modified) read.delete(p);
  return { readFiles: [...read].sort(), modifiedFiles: [...modified].sort() };
}

/** The files an assistant message's `read`, `write` and `edit` calls name. */
export function* fileTouches(m: AgentMessage): Generator<{ tool: "read" | "write" | "edit"; path: string }> {
  if (m.role !== "assistant") return;
  for (const block of m.content) {
    if (block.type !== "toolCall") continue;
    const path = block.arguments?.path;
    if (typeof path !== "string" || path === "") continue;
    if (block.name === "read" || block.name === "write" || block.name === "edit") yield { tool: block.name, path };
  }
}

/** The file lists of a compaction's `details`, if it has them in the shape `collectFileOps` returns. */
export function readFileOps(details: unknown): FileOps | undefined {
  if (typeof details !== "object" || details === null) return undefined;
  const { readFiles, modifiedFiles } = details as Record<string, unknown>;
  const strings = (x: unknown): string[] => (Array.isArray(x) ? x.filter((s): s is string => typeof s === "string") : []);
  if (!Array.isArray(readFiles) && !Array.isArray(modifiedFiles)) return undefined;
  return { readFiles: strings(readFiles), modifiedFiles: strings(modifiedFiles) };
}

/** The summary followed by the file lists, so the model keeps knowing which files it touched. */
export function appendFileLists(summary: string, ops: FileOps): string {
  let out = summary.trimEnd();
  if (ops.readFiles.length > 0) out += `\n\n<read-files>\n${ops.readFiles.join("\n")}\n</read-files>`;
  if (ops.modifiedFiles.length > 0) out += `\n\n<modified-files>\n${ops.modifiedFiles.join("\n")}\n</modified-files>`;
  return out;
}

const TOOL_RESULT_LIMIT = 2000;
const THINKING_LIMIT = 2000;
const ARGUMENT_STRING_LIMIT = 500;

/**
 * A plain-text transcript for the summarizer. Written as labelled lines rather than chat
 * turns so the model reads it as material and does not continue it; tool results and long
 * tool arguments are truncated to keep the summary request small.
 */
export function serializeForSummary(messages: readonly AgentMessage[]): string {
  const parts: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
        parts.push(`[User]: ${blocksText(m.content)}`);
        break;
      case "assistant":
        for (const block of m.content) {
          if (block.type === "text") {
            if (block.text.trim()) parts.push(`[Assistant]: ${block.text}`);
          } else if (block.type === "thinking") {
            if (!block.redacted && block.thinking.trim()) parts.push(`[Assistant thinking]: ${truncate(block.thinking, THINKING_LIMIT)}`);
          } else {
            parts.push(`[Tool call] ${block.name}(${JSON.stringify(shortenStrings(block.arguments))})`);
          }
        }
        if (m.stopReason === "error") parts.push(`[Assistant error]: ${m.errorMessage ?? "unknown error"}`);
        else if (m.stopReason === "aborted") parts.push("[Assistant]: (response aborted)");
        break;
      case "toolResult":
        parts.push(`[Tool result${m.isError ? " (error)" : ""}] ${m.toolName}: ${truncate(blocksText(m.content), TOOL_RESULT_LIMIT)}`);
        break;
      case "bashExecution":
        if (!m.excludeFromContext) {
          const text = bashExecutionText(m.command, m.output, m.exitCode, m.cancelled, m.truncated, m.fullOutputPath);
          parts.push(`[User ran a shell command]: ${truncate(text, TOOL_RESULT_LIMIT)}`);
        }
        break;
      case "custom":
        parts.push(`[Custom message (${m.customType})]: ${blocksText(m.content)}`);
        break;
      case "branchSummary":
        parts.push(`[Summary of an abandoned branch]: ${m.summary}`);
        break;
      case "compactionSummary":
        parts.push(`[Summary of earlier context]: ${m.summary}`);
        break;
    }
  }
  return parts.join("\n\n");
}

export interface SummaryRequestOptions {
  model: Model;
  apiKey?: string;
  authHeaders?: Record<string, string>;
  /** The part of the conversation to summarize. */
  messages: readonly AgentMessage[];
  previousSummary?: string;
  customInstructions?: string;
  thinkingLevel?: ThinkingLevel;
  /** Summarize the first part of a split turn (its own, shorter format) instead of the history. */
  turnPrefix?: boolean;
  /** Summarize a branch that is being left (its own format) instead of the history. */
  branch?: boolean;
  /** `customInstructions` replace the format instead of adding a focus to it. */
  replaceInstructions?: boolean;
}

/** A one-message, tool-less request asking the model for a structured summary. */
export function buildSummaryRequest(opts: SummaryRequestOptions): LlmRequest {
  const transcript = serializeForSummary(opts.messages) || "(no messages)";
  const focus = opts.customInstructions?.trim();
  let text = opts.replaceInstructions && focus
    ? `<transcript>\n${transcript}\n</transcript>\n\n${focus}`
    : opts.branch
      ? branchSummaryPrompt(transcript)
      : opts.turnPrefix
        ? turnPrefixPrompt(transcript)
        : opts.previousSummary
          ? updatedSummaryPrompt(opts.previousSummary, transcript)
          : freshSummaryPrompt(transcript);
  if (focus && !opts.replaceInstructions) text += focusSuffix(focus);
  return {
    model: opts.model,
    ...(opts.apiKey !== undefined ? { apiKey: opts.apiKey } : {}),
    ...(opts.authHeaders ? { authHeaders: opts.authHeaders } : {}),
    systemPrompt: SUMMARY_SYSTEM_PROMPT,
    messages: [{ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }],
    tools: [],
    thinkingLevel: opts.thinkingLevel ?? "off",
    // No later request starts with this transcript: a breakpoint on it would be a write never read.
    cacheConversation: false,
  };
}

export interface SummaryRetry {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
  maxAgentDelayMs?: number;
  /** A transient failure will be retried after `delayMs`. */
  onScheduled(attempt: number, maxAttempts: number, delayMs: number, errorMessage: string): void;
  /** The delay is over and the next attempt starts. */
  onAttemptStart(): void;
  /** Called once when a sequence that scheduled at least one retry ends, whatever the outcome. */
  onFinished(): void;
}

export type SummaryResult = { summary: string; usage: Usage } | { error: string; aborted: boolean; usage: Usage };

/**
 * Runs the summary request, retrying transient failures with backoff. Never throws;
 * `usage` adds up every attempt, failed ones included.
 */
export async function summarize(stream: StreamFn, req: LlmRequest, signal: AbortSignal, retry: SummaryRetry): Promise<SummaryResult> {
  const usage = emptyUsage();
  let attempt = 0;
  const finish = <T extends SummaryResult>(result: T): T => {
    if (attempt > 0) retry.onFinished();
    return result;
  };
  const aborted = () => finish({ error: "Compaction aborted", aborted: true, usage });

  for (;;) {
    if (signal.aborted) return aborted();
    const reply = await runOnce(stream, req, signal);
    if (reply.message) addUsage(usage, reply.message.usage);
    if (signal.aborted || reply.message?.stopReason === "aborted") return aborted();
    if (reply.error === undefined) {
      const summary = reply.message ? replyText(reply.message) : "";
      if (summary) return finish({ summary, usage });
      return finish({ error: "The model returned an empty summary", aborted: false, usage });
    }
    if (!retry.enabled || attempt >= retry.maxRetries || !isRetryableAssistantError({ stopReason: "error", errorMessage: reply.error })) {
      return finish({ error: reply.error, aborted: false, usage });
    }
    attempt++;
    const delayMs = retryDelayMs(retry, attempt);
    retry.onScheduled(attempt, retry.maxRetries, delayMs, reply.error);
    if (!(await cancellableSleep(delayMs, signal))) return aborted();
    retry.onAttemptStart();
  }
}

async function runOnce(stream: StreamFn, req: LlmRequest, signal: AbortSignal): Promise<{ message?: AssistantMessage; error?: string }> {
  try {
    const s = stream(req, signal);
    for await (const _ of s) {
      // deltas are not forwarded: only the finished summary matters
    }
    const message = await s.result();
    if (message.stopReason === "error") return { message, error: message.errorMessage ?? "unknown error" };
    return { message };
  } catch (err) {
    // StreamFns promise not to throw, but a broken one must not take the session down
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The summary of a plan's history, and for a split turn the summary of the turn's first part
 * after SPLIT_TURN_MARKER. `run` makes one summary request (history, or turn prefix); the first
 * failure ends it.
 */
export async function summarizePlan<F extends { error: string }>(
  plan: Pick<CompactionPlan, "messages" | "turnPrefix" | "splitTurn" | "previousSummary">,
  run: (messages: AgentMessage[], turnPrefix: boolean) => Promise<{ summary: string } | F>,
): Promise<{ summary: string } | F> {
  if (!plan.splitTurn) return run(plan.messages, false);
  let history = plan.previousSummary ?? NO_EARLIER_HISTORY;
  if (plan.messages.length > 0) {
    const out = await run(plan.messages, false);
    if ("error" in out) return out;
    history = out.summary;
  }
  const prefix = await run(plan.turnPrefix, true);
  if ("error" in prefix) return prefix;
  return { summary: `${history}\n\n---\n\n${SPLIT_TURN_MARKER}\n\n${prefix.summary}` };
}

/** The reference's defaults, which pion's settings share. */
export const COMPACTION_DEFAULTS = { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 } as const;

// The classifier lives in providers/overflow.ts; importers of this module keep finding it here.
export { isContextOverflow };

/**
 * What a finished attempt asks of recovery (the reference's reading, providers/overflow.ts).
 * `overflow`: the request did not fit (the provider's context-length error, or a reply cut off
 * with no output after a prompt that filled the window): compact and retry. `silent`: a reply
 * that completed although its prompt exceeded the window: compact, and keep the reply.
 * `truncated`: a reply cut off below the model's output limit, which context pressure or the
 * provider may have caused: worth one compact-and-retry when there is something to compact. A
 * reply that used the whole output limit is none of these: a normal, truncated reply. Without
 * the model's limits only the provider's error counts.
 */
export function overrunOf(message: AssistantMessage, limits?: Pick<Model, "contextWindow" | "maxTokens">): "overflow" | "silent" | "truncated" | undefined {
  if (isContextOverflow(message, limits?.contextWindow)) return message.stopReason === "stop" ? "silent" : "overflow";
  return limits && isRecoverableLength(message, limits.maxTokens) ? "truncated" : undefined;
}

/** Whether the context has grown into the reserve kept free below the window. */
export function shouldCompact(contextTokens: number | null, contextWindow: number, reserveTokens: number): boolean {
  if (contextTokens === null || contextWindow <= 0) return false;
  return contextTokens > contextWindow - reserveTokens;
}

export function estimateContextTokens(messages: readonly AgentMessage[]): number {
  let sum = 0;
  for (const m of messages) sum += estimateTokens(m);
  return sum;
}

function blocksText(content: string | readonly (TextContent | ImageContent)[]): string {
  if (typeof content === "string") return content;
  return content.map((b) => (b.type === "text" ? b.text : `[image ${b.mimeType}]`)).join("\n");
}

function replyText(m: AssistantMessage): string {
  return m.content
    .filter((b): b is TextContent => b.type === "text")
    .map((b) => b.text)
    .join("")
    .trim();
}

function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[… ${text.length - limit} more characters left out]`;
}

function shortenStrings(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] = typeof v === "string" && v.length > ARGUMENT_STRING_LIMIT ? `${v.slice(0, ARGUMENT_STRING_LIMIT)}… (${v.length - ARGUMENT_STRING_LIMIT} more characters)` : v;
  }
  return out;
}

