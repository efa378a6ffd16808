/**
 * One ACP session: a pion session (its own run, queue and MCP servers) and the stream of
 * `session/update` notifications that mirrors its events. Prompts wait for their own
 * `prompt_result`; a cancel aborts the run and drops the prompts queued behind it.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { Composed } from "../modes/compose.ts";
import type { ImageContent } from "../providers/types.ts";
import type { SessionEvent } from "../session/session-types.ts";
import { resolveToolPath } from "../tools/path.ts";
import type { ToolResult } from "../tools/tool.ts";
import type { RecordingFiles } from "./files.ts";
import { currentTitle, infoUpdate, sessionCost, titleFromPrompt, usageUpdate } from "./session-info.ts";
import type { EditorTerminals } from "./terminal.ts";
import { planUpdate, toolCallEnd, toolCallProgress, toolCallStart, toolCallTerminal } from "./updates.ts";

export type Notify = (update: acp.SessionUpdate) => Promise<void>;

/** What a pion run ended with, as ACP's stop reasons. */
export function stopReasonOf(r: { stopReason: string; aborted: boolean }): acp.StopReason {
  if (r.aborted || r.stopReason === "aborted") return "cancelled";
  if (r.stopReason === "length") return "max_tokens";
  if (r.stopReason === "limit") return "max_turn_requests";
  if (r.stopReason === "refusal") return "refusal";
  return "end_turn";
}

export class SessionLink {
  private nextPrompt = 0;
  private readonly waiting = new Map<string, (r: Extract<SessionEvent, { type: "prompt_result" }>) => void>();
  /** Updates go out one after another, in event order. */
  private tail: Promise<void> = Promise.resolve();
  /** The cancelled run, until it has settled. */
  private stopping: Promise<void> | undefined;
  /** The title the editor was last told (or the session had when it was opened). */
  private title: string | undefined;
  /** The session's cost so far in USD, once read (sessionCost); undefined until then and after a compaction. */
  private cost: number | undefined;

  constructor(
    readonly composed: Composed,
    private readonly notify: Notify,
    private readonly files: RecordingFiles,
    /** The editor's terminals the session's commands run in, when the editor offers them. */
    private readonly terminals?: EditorTerminals,
  ) {
    this.title = currentTitle(composed.session);
    composed.session.subscribe((e) => this.onEvent(e));
    if (terminals) terminals.onCreated = (callId, terminalId) => this.send(toolCallTerminal(callId, terminalId));
  }

  get sessionId(): string {
    return this.composed.session.sessionId;
  }

  /** Queues an update behind the ones before it. */
  send(update: acp.SessionUpdate): void {
    this.tail = this.tail.then(() => this.notify(update)).catch(() => undefined);
  }

  /** Resolves once every update queued so far was written. */
  flushed(): Promise<void> {
    return this.tail;
  }

  private onEvent(e: SessionEvent): void {
    if (!("type" in e)) return;
    const cwd = this.composed.cwd;
    switch (e.type) {
      case "message_update": {
        const ev = e.assistantMessageEvent;
        if (ev.type === "text_delta") this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: ev.delta } });
        else if (ev.type === "thinking_delta") this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: ev.delta } });
        break;
      }
      case "tool_execution_start": {
        const args = (e.args ?? {}) as Record<string, unknown>;
        if ((e.toolName === "edit" || e.toolName === "write") && typeof args.path === "string") {
          this.files.expect(e.toolCallId, resolveToolPath(args.path, cwd));
        }
        this.send(toolCallStart(e.toolCallId, e.toolName, args, cwd));
        break;
      }
      case "tool_execution_update":
        this.send(toolCallProgress(e.toolCallId, e.partialResult as ToolResult, this.terminals?.terminalOf(e.toolCallId)));
        break;
      case "tool_execution_end": {
        const terminalId = this.terminals?.terminalOf(e.toolCallId);
        this.terminals?.forget(e.toolCallId);
        this.send(toolCallEnd(e.toolCallId, e.result as ToolResult, e.isError, this.files.take(e.toolCallId), terminalId));
        break;
      }
      case "todo_update":
        this.send(planUpdate(e.phases));
        break;
      case "message_end": {
        const m = e.message;
        if (m.role === "assistant") {
          // The store is read for the session's cost once, then each reply's cost is added (a compaction reads it again).
          this.cost = this.cost === undefined ? sessionCost(this.composed.session) : this.cost + m.usage.cost.total;
          const usage = usageUpdate(this.composed.session, this.cost);
          if (usage) this.send(usage);
        } else if (m.role === "user" && this.title === undefined) this.retitle(titleFromPrompt(m.content));
        break;
      }
      case "compaction_end":
        // the summary's model call counts in the session's cost (its entry holds the usage)
        if (e.result) this.cost = undefined;
        break;
      case "session_info_changed":
        this.retitle(e.name ?? currentTitle(this.composed.session));
        break;
      case "prompt_result": {
        const resolve = this.waiting.get(e.id);
        if (resolve) {
          this.waiting.delete(e.id);
          resolve(e);
        }
        break;
      }
    }
  }

  /** Tells the editor the session's title when it changed. */
  private retitle(title: string | undefined): void {
    if (title === undefined || title === this.title) return;
    this.title = title;
    this.send(infoUpdate(title));
  }

  /** Runs one prompt (queued as a follow-up when a run is going on) and answers its stop reason. */
  async prompt(blocks: acp.ContentBlock[], signal: AbortSignal): Promise<acp.PromptResponse> {
    const { text, images } = toPromptInput(blocks);
    const id = `acp-${++this.nextPrompt}`;
    const session = this.composed.session;
    // A prompt sent right after a cancel starts a run of its own instead of queueing behind
    // the run that is stopping (which takes no more follow-ups).
    if (this.stopping) await this.stopping;
    if (signal.aborted) return { stopReason: "cancelled" };
    const result = new Promise<Extract<SessionEvent, { type: "prompt_result" }>>((r) => this.waiting.set(id, r));
    // `$/cancel_request` for this prompt: a queued one leaves the queue, a running one stops its run.
    const onAbort = () => {
      if (!session.dropQueued(id)) void session.abort();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      session.prompt(text, images, session.isBusy ? "followUp" : undefined, id);
      const r = await result;
      await this.flushed();
      if (r.stopReason === "error" && !r.aborted) throw new Error(r.errorMessage ?? "the model call failed");
      return { stopReason: stopReasonOf(r) };
    } finally {
      this.waiting.delete(id);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /**
   * `session/cancel`: every prompt of the session ends with `cancelled`, the running one and
   * those queued behind it. The queue is emptied first, so the stopping run cannot take a
   * queued prompt to the model; each dropped prompt gets its (aborted) prompt_result.
   */
  async cancel(): Promise<void> {
    const session = this.composed.session;
    session.clearQueues();
    const stopping = session.abort();
    this.stopping = stopping;
    try {
      await stopping;
    } finally {
      if (this.stopping === stopping) this.stopping = undefined;
    }
  }
}

/** ACP prompt content as pion's prompt text and images (resources inline, links as references). */
export function toPromptInput(blocks: readonly acp.ContentBlock[]): { text: string; images: ImageContent[] | undefined } {
  const parts: string[] = [];
  const images: ImageContent[] = [];
  for (const b of blocks) {
    switch (b.type) {
      case "text":
        parts.push(b.text);
        break;
      case "image":
        images.push({ type: "image", data: b.data, mimeType: b.mimeType });
        break;
      case "resource_link":
        parts.push(`[${b.name}](${b.uri})`);
        break;
      case "resource": {
        const r = b.resource;
        if ("text" in r) parts.push(`<context uri="${r.uri}">\n${r.text}\n</context>`);
        else parts.push(`[binary resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ""}]`);
        break;
      }
      case "audio":
        parts.push(`[audio (${b.mimeType}) not supported]`);
        break;
    }
  }
  return { text: parts.join("\n\n"), images: images.length > 0 ? images : undefined };
}
