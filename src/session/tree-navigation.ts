/**
 * Tree navigation (`ctx.navigateTree`, the reference's `/tree`): the leaf moves to another entry of
 * the same session; the branch being left may be summarized by the session's model into a
 * `branch_summary` entry placed where the navigation lands. Extensions are asked first
 * (`session_before_tree`: cancel, their own summary, other instructions or label) and told after
 * (`session_tree`), once every entry is committed.
 */
import type { ExtensionRunner } from "../extensions/types.ts";
import type { Model, StreamFn, Usage } from "../providers/types.ts";
import { pathTo, type BranchSummaryEntry, type Entry } from "../store/entries.ts";
import { PionError } from "../util/errors.ts";
import { userEntryText } from "./navigation.ts";
import type { CompactionEvent } from "./compactor.ts";
import type { EntryInput } from "./tree.ts";

export interface NavigateOptions {
  /** Summarize the branch being left. */
  summarize?: boolean;
  customInstructions?: string;
  /** `customInstructions` replace the summary prompt instead of being added to it. */
  replaceInstructions?: boolean;
  /** Label for the summary entry, or for the target when nothing is summarized. */
  label?: string;
}

export interface NavigateResult {
  cancelled: boolean;
  /** The summary was aborted (then `cancelled` too). */
  aborted?: boolean;
  /** The text of a user or custom message target, which the navigation goes back to before. */
  editorText?: string;
  summaryEntry?: BranchSummaryEntry;
}

/** What navigation needs of the session. */
export interface NavigationHost {
  /** "streaming": a prompt runs; "busy": a compaction or another navigation holds the session. */
  state: "idle" | "streaming" | "busy";
  model: Model | undefined;
  entries(): Entry[];
  leaf(): string | null;
  /** Hold the session while `work` runs (see AgentSession.hold); its signal is what abort aborts. */
  hold<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Commit an entry as the leaf's child; it becomes the leaf. */
  append(e: EntryInput): Entry;
  setLeaf(id: string | null): void;
  extensions?: ExtensionRunner;
  summaries: {
    auth(provider: string, signal?: AbortSignal): Promise<{ apiKey?: string; headers?: Record<string, string> }>;
    stream: StreamFn;
    retry: { enabled: boolean; maxRetries: number; baseDelayMs: number };
  };
  /** The summary's retries, as the session's events (source "branchSummary"). */
  emit(e: CompactionEvent): void;
}

type Summary = { summary: string; details?: unknown; usage?: Usage; fromHook: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The entry the leaf lands on: a user or custom message is gone back before (its text returned), anything else is the leaf itself. */
function landing(target: Entry): { leafId: string | null; editorText?: string } {
  if (target.type === "message" && target.message.role === "user") return { leafId: target.parentId, editorText: userEntryText(target) ?? "" };
  if (target.type === "custom_message") {
    const c = target.content;
    const editorText = typeof c === "string" ? c : c.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
    return { leafId: target.parentId, editorText };
  }
  return { leafId: target.id };
}

/** The entries from `fromId` back to (not including) the deepest entry it shares with `targetId`'s path, oldest first. */
function abandoned(byId: ReadonlyMap<string, Entry>, fromId: string | null, targetId: string) {
  // The extension surface's helper is the one mechanism for this; it is loaded only when navigating.
  const { collectEntriesForBranchSummary } = require("../extensions/surface/compaction-summary.ts") as typeof import("../extensions/surface/compaction-summary.ts");
  type Reader = Parameters<typeof collectEntriesForBranchSummary>[0];
  const reader = { getBranch: (id?: string) => pathTo(byId, id ?? null), getEntry: (id: string) => byId.get(id) } as unknown as Reader;
  const out = collectEntriesForBranchSummary(reader, fromId, targetId);
  return { entries: out.entries as unknown as Entry[], commonAncestorId: out.commonAncestorId };
}

/** The session model's summary of `entries` (undefined: aborted). */
async function summarize(host: NavigationHost, model: Model, entries: Entry[], instructions: { customInstructions?: string; replaceInstructions?: boolean }, signal: AbortSignal): Promise<Summary | undefined> {
  const { generateBranchSummary } = require("../extensions/surface/compaction-summary.ts") as typeof import("../extensions/surface/compaction-summary.ts");
  const { auth, stream, retry } = host.summaries;
  const callbacks = {
    onRetryScheduled: (attempt: number, maxAttempts: number, delayMs: number, errorMessage: string) => host.emit({ type: "summarization_retry_scheduled", attempt, maxAttempts, delayMs, errorMessage }),
    onRetryAttemptStart: () => host.emit({ type: "summarization_retry_attempt_start", source: "branchSummary" }),
    onRetryFinished: () => host.emit({ type: "summarization_retry_finished" }),
  };
  const out = await generateBranchSummary(entries as unknown as Parameters<typeof generateBranchSummary>[0], { model, ...(await auth(model.provider, signal)), signal, stream, retry, callbacks, ...instructions });
  if (out.aborted) return undefined;
  if (out.error !== undefined || out.summary === undefined) throw new PionError(out.error ?? "Branch summarization failed", "summary_failed");
  const done = out as { summary: string; usage?: Usage; readFiles?: string[]; modifiedFiles?: string[] };
  const details = { readFiles: done.readFiles ?? [], modifiedFiles: done.modifiedFiles ?? [] };
  return { summary: done.summary, details, ...(done.usage ? { usage: done.usage } : {}), fromHook: false };
}

/**
 * Move the session's leaf to `targetId` (as the reference's AgentSession.navigateTree). Rejects
 * while a prompt runs, a compaction or another navigation holds the session, when a summary is
 * asked for without a model, and when the target is not in the tree; moving to the leaf itself
 * does nothing. A summary and its label are committed before `session_tree` is sent.
 */
export async function navigateTree(targetId: string, options: NavigateOptions, host: NavigationHost): Promise<NavigateResult> {
  if (host.state === "streaming") throw new PionError("Wait for the current response to finish before navigating the session tree.", "busy");
  if (host.state === "busy") throw new PionError("Wait for the current compaction or tree navigation to finish before navigating the session tree.", "busy");
  const oldLeafId = host.leaf();
  if (targetId === oldLeafId) return { cancelled: false };
  const model = host.model;
  if (options.summarize && !model) throw new PionError("No model available for summarization", "no_model");
  const byId = new Map(host.entries().map((e) => [e.id, e]));
  const target = byId.get(targetId);
  if (!target) throw new PionError(`Entry ${targetId} not found`, "not_found");
  const { entries, commonAncestorId } = abandoned(byId, oldLeafId, targetId);
  const ext = host.extensions;

  const placed = await host.hold(async (signal): Promise<NavigateResult & { fromExtension?: boolean }> => {
    let { customInstructions, replaceInstructions, label } = options;
    let summary: Summary | undefined;
    if (ext?.handles("session_before_tree")) {
      const preparation = { targetId, oldLeafId, commonAncestorId, entriesToSummarize: entries, userWantsSummary: options.summarize ?? false, customInstructions, replaceInstructions, label };
      const answer = await ext.askBefore("session_before_tree", { preparation, signal });
      if (answer?.cancel === true) return { cancelled: true };
      const own = answer?.summary;
      if (options.summarize && isObject(own) && typeof own.summary === "string" && own.summary) {
        summary = { summary: own.summary, details: own.details, ...(isObject(own.usage) ? { usage: own.usage as unknown as Usage } : {}), fromHook: true };
      }
      if (answer?.customInstructions !== undefined) customInstructions = answer.customInstructions as string;
      if (answer?.replaceInstructions !== undefined) replaceInstructions = answer.replaceInstructions as boolean;
      if (answer?.label !== undefined) label = answer.label as string;
    }
    if (options.summarize && entries.length > 0 && !summary) {
      summary = await summarize(host, model!, entries, { customInstructions, replaceInstructions }, signal);
      if (!summary) return { cancelled: true, aborted: true };
    }
    const { leafId, editorText } = landing(target);
    host.setLeaf(leafId);
    let summaryEntry: BranchSummaryEntry | undefined;
    if (summary) {
      const { fromHook, ...rest } = summary;
      summaryEntry = host.append({ type: "branch_summary", fromId: oldLeafId ?? "root", ...rest, fromHook }) as BranchSummaryEntry;
    }
    if (label) host.append({ type: "label", targetId: summaryEntry?.id ?? targetId, label });
    return { cancelled: false, ...(editorText !== undefined ? { editorText } : {}), ...(summaryEntry ? { summaryEntry, fromExtension: summary!.fromHook } : {}) };
  });
  if (placed.cancelled) return placed;
  const { fromExtension, ...result } = placed;
  // Released by now: session_tree handlers may prompt or navigate again.
  await ext?.notify("session_tree", { newLeafId: host.leaf(), oldLeafId, summaryEntry: result.summaryEntry, fromExtension });
  return result;
}
