/** Branches of session entries and a scripted model for the compaction unit tests. */
import { PushStream, emptyUsage } from "../../../src/providers/event-stream.ts";
import type { AssistantMessage, LlmRequest, Model, StreamFn, TextContent, ToolCall, Usage } from "../../../src/providers/types.ts";
import { estimateTokens } from "../../../src/session/stats.ts";
import type { AgentMessage, Entry } from "../../../src/store/entries.ts";

export const model: Model = {
  id: "fake-model",
  name: "Fake",
  api: "scripted",
  provider: "fake",
  baseUrl: "http://localhost",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100_000,
  maxTokens: 8_000,
};

export function usage(input: number, output: number): Usage {
  return { ...emptyUsage(), input, output, totalTokens: input + output };
}

export function assistantMessage(content: (TextContent | ToolCall)[], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return { role: "assistant", content, api: "scripted", provider: "fake", model: "fake-model", usage: usage(10, 5), stopReason: "stop", timestamp: 0, ...extra };
}

type NewEntry = Entry extends infer E ? (E extends Entry ? Omit<E, "id" | "parentId" | "timestamp"> : never) : never;

/** Builds a linear branch; ids are e0, e1, … in append order. */
export class Branch {
  readonly entries: Entry[] = [];

  private add(entry: NewEntry): string {
    const id = `e${this.entries.length}`;
    const parentId = this.entries.at(-1)?.id ?? null;
    this.entries.push({ ...entry, id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1) + this.entries.length * 1000).toISOString() } as Entry);
    return id;
  }

  message(message: AgentMessage): string {
    return this.add({ type: "message", message });
  }
  user(text: string): string {
    return this.message({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
  }
  say(text: string): string {
    return this.message(assistantMessage([{ type: "text", text }]));
  }
  call(id: string, name: string, args: Record<string, unknown>): string {
    return this.message(assistantMessage([{ type: "toolCall", id, name, arguments: args }], { stopReason: "toolUse" }));
  }
  result(callId: string, text: string, toolName = "read"): string {
    return this.message({ role: "toolResult", toolCallId: callId, toolName, content: [{ type: "text", text }], isError: false, timestamp: 0 });
  }
  /** An entry that is not part of the context (as the session writes first). */
  modelChange(): string {
    return this.add({ type: "model_change", provider: "fake", modelId: "fake-model" });
  }
  compaction(summary: string, firstKeptEntryId: string, details?: unknown): string {
    return this.add({ type: "compaction", summary, firstKeptEntryId, tokensBefore: 1000, details });
  }
  edit(targetId: string, replacement: AgentMessage | null): string {
    return this.add({ type: "context_edit", targetId, replacement });
  }
  index(id: string): number {
    return this.entries.findIndex((e) => e.id === id);
  }
}

/** Three user turns with tool calls; turn 2 is large. */
export function threeTurns(): Branch {
  const b = new Branch();
  b.user("first question");
  b.call("c1", "read", { path: "src/a.ts" });
  b.result("c1", "a".repeat(400));
  b.say("answer one");
  b.user("second question");
  b.call("c2", "read", { path: "src/b.ts" });
  b.result("c2", "b".repeat(4000));
  b.call("c3", "edit", { path: "src/b.ts", edits: [] });
  b.result("c3", "edited", "edit");
  b.say("answer two");
  b.user("third question");
  b.call("c4", "bash", { command: "bun test" });
  b.result("c4", "c".repeat(800), "bash");
  b.say("answer three");
  return b;
}

export function keptTokens(path: readonly Entry[], from: number): number {
  let sum = 0;
  for (const e of path.slice(from)) if (e.type === "message") sum += estimateTokens(e.message);
  return sum;
}

/** Every toolResult at or after the cut answers a call at or after the cut. */
export function splitsToolPair(path: readonly Entry[], cut: number): boolean {
  const keptCalls = new Set<string>();
  for (const e of path.slice(cut)) {
    if (e.type !== "message") continue;
    const m = e.message;
    if (m.role === "assistant") for (const c of m.content) if (c.type === "toolCall") keptCalls.add(c.id);
    if (m.role === "toolResult" && !keptCalls.has(m.toolCallId)) return true;
  }
  return false;
}

export type Reply = AssistantMessage | "hang";

/** A StreamFn that answers each request with the next scripted reply; "hang" waits for abort. */
export function scripted(...replies: Reply[]) {
  const requests: LlmRequest[] = [];
  const stream: StreamFn = (req, signal) => {
    requests.push(req);
    const reply = replies.shift();
    if (!reply) throw new Error(`no scripted reply for request #${requests.length}`);
    const out = new PushStream();
    if (reply === "hang") {
      signal.addEventListener("abort", () => out.end(assistantMessage([], { stopReason: "aborted", errorMessage: "aborted" })), { once: true });
      return out;
    }
    queueMicrotask(() => {
      reply.content.forEach((block, contentIndex) => {
        if (block.type === "text") out.push({ type: "text_delta", contentIndex, delta: block.text });
      });
      out.end(reply);
    });
    return out;
  };
  return { stream, requests };
}

export const text = (t: string, u = usage(100, 20)) => assistantMessage([{ type: "text", text: t }], { usage: u });
export const failure = (errorMessage: string, u = usage(0, 0)) => assistantMessage([], { stopReason: "error", errorMessage, usage: u });

