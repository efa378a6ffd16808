/**
 * The reference's summary functions that call a model: `generateSummary(WithUsage)`, `compact`
 * (a prepared compaction, split turns included) and `generateBranchSummary`, with the entry
 * helpers branch summaries need. Requests are pion's summary requests (session/compaction.ts,
 * pion's prompts) sent through pion's providers; the key comes from the call, else from the
 * session's registry (model-calls.ts). A `streamFn` the caller passes is used instead of the
 * providers, as the reference does.
 */
import { addUsage, emptyUsage } from "../../providers/event-stream.ts";
import { streamByApi } from "../../providers/index.ts";
import type { AssistantMessage, LlmRequest, Model, StreamFn, ThinkingLevel, Usage } from "../../providers/types.ts";
import type { AgentMessage, Entry } from "../../store/entries.ts";
import { entryMessage } from "../../session/cut-point.ts";
import { BRANCH_SUMMARY_PREAMBLE } from "../../session/compaction-prompt.ts";
import { appendFileLists, buildSummaryRequest, fileTouches, summarize, summarizePlan, type FileOps, type SummaryRetry } from "../../session/compaction.ts";
import { estimateTokens } from "../../session/stats.ts";
import { callAuth } from "../model-calls.ts";
import { projectEntry, sessionEntryToContextMessages } from "./compaction-context.ts";

type AnyEntry = Parameters<typeof sessionEntryToContextMessages>[0];
type ContextEdit = Parameters<typeof projectEntry>[1] & {};

/** The reference's retry policy and callbacks (pi-ai's retryAssistantCall). */
interface RetryPolicy {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
}
interface RetryCallbacks {
  onRetryScheduled?: (attempt: number, maxAttempts: number, delayMs: number, errorMessage: string) => unknown;
  onRetryAttemptStart?: () => unknown;
  onRetryFinished?: (success: boolean, attempt: number, finalError?: string) => unknown;
}
/** A pi-ai stream function: `(model, context, options)` to a stream with `result()`. */
type ExtensionStreamFn = (model: Model, context: { systemPrompt?: string; messages: unknown[] }, options: Record<string, unknown>) => { result(): Promise<AssistantMessage> } | Promise<{ result(): Promise<AssistantMessage> }>;

/** The reference's file operations: paths read, written and edited. */
export interface FileOperations {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

interface Call {
  model: Model;
  apiKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  thinkingLevel?: ThinkingLevel;
  streamFn?: ExtensionStreamFn;
  /** pion's own stream (the session's summaries go the way its requests go); wins over `streamFn`. */
  stream?: StreamFn;
  retry?: RetryPolicy;
  callbacks?: RetryCallbacks;
  sessionId?: string;
}

/** The reference's last positional parameters of a summary call (its `env` is not used: pion's providers read their own). */
type CallTail = [thinkingLevel?: ThinkingLevel, streamFn?: ExtensionStreamFn, env?: Record<string, string>, retry?: RetryPolicy, callbacks?: RetryCallbacks, sessionId?: string];

const callOf = (model: Model, apiKey: string | undefined, headers: Record<string, string> | undefined, signal: AbortSignal | undefined, tail: CallTail): Call => {
  const [thinkingLevel, streamFn, , retry, callbacks, sessionId] = tail;
  return { model, apiKey, headers, signal, thinkingLevel, streamFn, retry, callbacks, sessionId };
};

/** A caller's stream function as a pion StreamFn (its deltas are not needed, only the message). */
function viaStreamFn(fn: ExtensionStreamFn): StreamFn {
  return (req: LlmRequest, signal: AbortSignal) => {
    const options = { apiKey: req.apiKey, headers: req.authHeaders, signal, sessionId: req.sessionId, ...(req.thinkingLevel !== "off" ? { reasoning: req.thinkingLevel } : {}) };
    const message = (async () => (await fn(req.model, { systemPrompt: req.systemPrompt, messages: req.messages }, options)).result())();
    return { result: () => message, async *[Symbol.asyncIterator]() {} };
  };
}

/** One summary request (see buildSummaryRequest) under the caller's retry policy; a failure is thrown, labelled. */
async function requestSummary(call: Call, label: string, opts: Omit<Parameters<typeof buildSummaryRequest>[0], "model">): Promise<{ summary: string; usage: Usage } | { error: string; aborted: boolean }> {
  const { model } = call;
  const req: LlmRequest = {
    ...buildSummaryRequest({ ...opts, model, ...(model.reasoning && call.thinkingLevel ? { thinkingLevel: call.thinkingLevel } : {}) }),
    ...(await callAuth(model, call)),
    ...(call.sessionId ? { sessionId: call.sessionId } : {}),
  };
  let attempts = 0;
  let retried = false;
  const cb = call.callbacks;
  const retry: SummaryRetry = {
    enabled: call.retry?.enabled ?? false,
    maxRetries: call.retry?.maxRetries ?? 0,
    baseDelayMs: call.retry?.baseDelayMs ?? 0,
    onScheduled: (attempt, max, delayMs, message) => {
      attempts = attempt;
      void cb?.onRetryScheduled?.(attempt, max, delayMs, message);
    },
    onAttemptStart: () => void cb?.onRetryAttemptStart?.(),
    onFinished: () => (retried = true),
  };
  const stream = call.stream ?? (call.streamFn ? viaStreamFn(call.streamFn) : streamByApi);
  const out = await summarize(stream, req, call.signal ?? new AbortController().signal, retry);
  if (retried) void cb?.onRetryFinished?.(!("error" in out), attempts, "error" in out ? out.error : undefined);
  return "error" in out ? { error: `${label} failed: ${out.error}`, aborted: out.aborted } : out;
}

const failed = (out: { error: string }): never => {
  throw new Error(out.error);
};

/** A summary of `messages` (merged into `previousSummary` when given) and the usage of its request. */
export async function generateSummaryWithUsage(
  messages: AgentMessage[],
  model: Model,
  _reserveTokens?: number,
  apiKey?: string,
  headers?: Record<string, string>,
  signal?: AbortSignal,
  customInstructions?: string,
  previousSummary?: string,
  ...tail: CallTail
): Promise<{ text: string; usage: Usage }> {
  const call = callOf(model, apiKey, headers, signal, tail);
  const out = await requestSummary(call, "Summarization", { messages, previousSummary, customInstructions });
  if ("error" in out) return failed(out);
  return { text: out.summary, usage: out.usage };
}

export async function generateSummary(...args: Parameters<typeof generateSummaryWithUsage>): Promise<string> {
  return (await generateSummaryWithUsage(...args)).text;
}

/** A prepared compaction (the reference's CompactionPreparation) as its parts. */
interface Preparation {
  firstKeptEntryId: string;
  messagesToSummarize: AgentMessage[];
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
  fileOps: FileOperations | FileOps;
}

/** The file lists of the reference's file operations: read only, and written or edited, each sorted. */
export function fileLists(ops: FileOperations | FileOps): FileOps {
  if (!("read" in ops)) return ops;
  const modified = new Set([...ops.edited, ...ops.written]);
  return { readFiles: [...ops.read].filter((f) => !modified.has(f)).sort(), modifiedFiles: [...modified].sort() };
}

/**
 * The summary of a prepared compaction: its history, and for a split turn the turn's first part
 * on its own, with the files it read and modified appended. What a compaction entry records.
 */
export async function compact(
  preparation: Preparation,
  model: Model,
  apiKey?: string,
  headers?: Record<string, string>,
  customInstructions?: string,
  signal?: AbortSignal,
  ...tail: CallTail
) {
  const p = preparation;
  if (!p.firstKeptEntryId) throw new Error("compact: the preparation names no first kept entry");
  const call = callOf(model, apiKey, headers, signal, tail);
  const usage = emptyUsage();
  const plan = { messages: p.messagesToSummarize, turnPrefix: p.turnPrefixMessages, splitTurn: p.isSplitTurn && p.turnPrefixMessages.length > 0, previousSummary: p.previousSummary };
  const out = await summarizePlan(plan, async (messages, turnPrefix) => {
    const one = await requestSummary(call, turnPrefix ? "Turn prefix summarization" : "Summarization", {
      messages,
      customInstructions,
      turnPrefix,
      ...(turnPrefix ? {} : { previousSummary: p.previousSummary }),
    });
    if (!("error" in one)) addUsage(usage, one.usage);
    return one;
  });
  if ("error" in out) return failed(out);
  const lists = fileLists(p.fileOps);
  return { summary: appendFileLists(out.summary, lists), firstKeptEntryId: p.firstKeptEntryId, tokensBefore: p.tokensBefore, usage, details: lists };
}

/** What collectEntriesForBranchSummary reads of a SessionManager. */
interface BranchReader {
  getBranch(fromId?: string): AnyEntry[];
  getEntry(id: string): AnyEntry | undefined;
}

/**
 * The entries a branch summary covers when moving from `oldLeafId` to `targetId`: from the old
 * leaf back to (not including) the deepest entry both paths share, oldest first.
 */
export function collectEntriesForBranchSummary(session: BranchReader, oldLeafId: string | null, targetId: string): { entries: AnyEntry[]; commonAncestorId: string | null } {
  if (!oldLeafId) return { entries: [], commonAncestorId: null };
  const onOld = new Set(session.getBranch(oldLeafId).map((e) => e.id));
  const target = session.getBranch(targetId);
  let commonAncestorId: string | null = null;
  for (let i = target.length - 1; i >= 0; i--) {
    if (onOld.has(target[i]!.id)) {
      commonAncestorId = target[i]!.id;
      break;
    }
  }
  const entries: AnyEntry[] = [];
  for (let id: string | null = oldLeafId; id && id !== commonAncestorId; ) {
    const e = session.getEntry(id);
    if (!e) break;
    entries.push(e);
    id = e.parentId;
  }
  return { entries: entries.reverse(), commonAncestorId };
}

/** What a branch summary reads of one entry: tool results leave no trace (their calls do), a compaction its summary. */
function branchMessage(e: AnyEntry, edit: ContextEdit | undefined): AgentMessage | undefined {
  if (e.type === "message" && (e.message as { role: string }).role === "toolResult") return undefined;
  // An empty branch summary counts here, unlike in the context.
  if (e.type === "branch_summary") return entryMessage(e as unknown as Entry);
  const messages = e.type === "message" || e.type === "custom_message" ? projectEntry(e, edit) : sessionEntryToContextMessages(e);
  return messages.at(-1) as unknown as AgentMessage | undefined;
}

/**
 * The messages of `entries` that fit `tokenBudget` (0: all), newest kept first, a summary still
 * let in while under 90% of it; and the files touched across all of them, earlier branch
 * summaries' lists included.
 */
export function prepareBranchEntries(entries: AnyEntry[], tokenBudget = 0): { messages: AgentMessage[]; fileOps: FileOperations; totalTokens: number } {
  const fileOps: FileOperations = { read: new Set(), written: new Set(), edited: new Set() };
  for (const e of entries) {
    if (e.type !== "branch_summary" || e.fromHook || !e.details) continue;
    const d = e.details as { readFiles?: unknown; modifiedFiles?: unknown };
    if (Array.isArray(d.readFiles)) for (const f of d.readFiles) fileOps.read.add(f);
    if (Array.isArray(d.modifiedFiles)) for (const f of d.modifiedFiles) fileOps.edited.add(f);
  }
  const edits = new Map<string, ContextEdit>();
  for (const e of entries) if (e.type === "context_edit") edits.set(e.targetId as string, e as ContextEdit);
  const messages: AgentMessage[] = [];
  let totalTokens = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    const m = branchMessage(e, edits.get(e.id));
    if (!m) continue;
    for (const { tool, path } of fileTouches(m)) fileOps[tool === "read" ? "read" : tool === "write" ? "written" : "edited"].add(path);
    const tokens = estimateTokens(m);
    if (tokenBudget > 0 && totalTokens + tokens > tokenBudget) {
      if ((e.type === "compaction" || e.type === "branch_summary") && totalTokens < tokenBudget * 0.9) {
        messages.unshift(m);
        totalTokens += tokens;
      }
      break;
    }
    messages.unshift(m);
    totalTokens += tokens;
  }
  return { messages, fileOps, totalTokens };
}

interface BranchSummaryOptions extends Omit<Call, "sessionId"> {
  customInstructions?: string;
  replaceInstructions?: boolean;
  reserveTokens?: number;
}

/** A summary of a branch being left, from as much of it as fits the model's window less `reserveTokens`. */
export async function generateBranchSummary(entries: AnyEntry[], options: BranchSummaryOptions) {
  const { model, reserveTokens = 16384, customInstructions, replaceInstructions } = options;
  const { messages, fileOps } = prepareBranchEntries(entries, (model.contextWindow || 128000) - reserveTokens);
  if (messages.length === 0) return { summary: "No content to summarize" };
  const out = await requestSummary(options, "Branch summarization", { messages, branch: true, customInstructions, replaceInstructions });
  if ("error" in out) return out.aborted ? { aborted: true } : { error: out.error };
  const lists = fileLists(fileOps);
  return { summary: appendFileLists(BRANCH_SUMMARY_PREAMBLE + out.summary, lists), usage: out.usage, ...lists };
}

export const summaryExports = {
  generateSummary,
  generateSummaryWithUsage,
  compact,
  collectEntriesForBranchSummary,
  prepareBranchEntries,
  generateBranchSummary,
};
