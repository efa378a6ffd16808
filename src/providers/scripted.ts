import { readFileSync } from "node:fs";
import { basename } from "node:path";
import * as v from "valibot";
import { describeIssues } from "../util/issues.ts";
import { priceUsage } from "./cost.ts";
import { emptyAssistant, PushStream } from "./event-stream.ts";
import type { Model, StreamFn, ToolCall } from "./types.ts";

/**
 * The scripted provider: replies come from a JSON file instead of a model, for testing an
 * editor plugin or a CI pipeline offline. Each model request takes the next reply and
 * streams it through the same normalized events as a real provider.
 */
const block = () =>
  v.variant("type", [
    v.object({ type: v.literal("text"), text: v.string() }),
    v.object({ type: v.literal("thinking"), thinking: v.string() }),
    v.object({ type: v.literal("toolCall"), id: v.optional(v.string()), name: v.string(), arguments: v.record(v.string(), v.unknown()) }),
  ]);
const reply = () => v.object({
  /** Shorthand for one text block. */
  text: v.optional(v.string()),
  content: v.optional(v.array(block())),
  usage: v.optional(v.object({ input: v.optional(v.number()), output: v.optional(v.number()), cacheRead: v.optional(v.number()), cacheWrite: v.optional(v.number()) })),
  stopReason: v.optional(v.picklist(["stop", "length", "toolUse"])),
  /** The request fails with this message (stopReason "error"), e.g. "529 overloaded". */
  error: v.optional(v.string()),
  /** Pause before each streamed chunk. */
  delayMs: v.optional(v.number()),
  /** Characters per text delta (default: one delta per word). */
  chunkSize: v.optional(v.number()),
});
/** Built when a script is read (`--provider scripted` only). */
const scriptFile = () => v.union([v.array(reply()), v.object({ replies: v.array(reply()) })]);
export type ScriptedReply = v.InferOutput<ReturnType<typeof reply>>;

export function loadScript(path: string): ScriptedReply[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`Cannot read scripted replies ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = v.safeParse(scriptFile(), raw);
  if (!parsed.success) throw new Error(`Invalid scripted replies in ${path}: ${describeIssues(parsed.issues)}`);
  return Array.isArray(parsed.output) ? parsed.output : parsed.output.replies;
}

export function scriptedModel(path: string): Model {
  return {
    id: basename(path),
    name: `Scripted (${basename(path)})`,
    api: "scripted",
    provider: "scripted",
    baseUrl: path,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200000,
    maxTokens: 8192,
  };
}

/** A StreamFn serving `replies` in order; when they run out the turn ends with an error. */
export function createScriptedStream(replies: ScriptedReply[]): StreamFn {
  let next = 0;
  let calls = 0;
  return (req, signal) => {
    const out = new PushStream();
    const msg = emptyAssistant(req.model);
    const reply = replies[next++];
    const call = ++calls;
    void (async () => {
      const pause = async () => {
        if (reply?.delayMs) await Bun.sleep(reply.delayMs);
        if (signal.aborted) throw new Error("aborted");
      };
      try {
        if (!reply) throw new Error(`Scripted provider: no reply left for request #${call} (the script has ${replies.length})`);
        msg.responseId = `scripted-${call}`;
        const blocks = reply.content ?? (reply.text !== undefined ? [{ type: "text" as const, text: reply.text }] : []);
        for (const b of blocks) {
          const i = msg.content.length;
          if (b.type === "toolCall") {
            const tc: ToolCall = { type: "toolCall", id: b.id ?? `call_${call}_${i}`, name: b.name, arguments: b.arguments };
            msg.content.push(tc);
            await pause();
            out.push({ type: "toolcall_start", contentIndex: i, id: tc.id, toolName: tc.name });
            out.push({ type: "toolcall_delta", contentIndex: i, delta: JSON.stringify(tc.arguments) });
            out.push({ type: "toolcall_end", contentIndex: i, toolCall: tc });
            continue;
          }
          const isText = b.type === "text";
          const full = isText ? b.text : b.thinking;
          const block = isText ? { type: "text" as const, text: "" } : { type: "thinking" as const, thinking: "" };
          msg.content.push(block);
          out.push({ type: isText ? "text_start" : "thinking_start", contentIndex: i });
          for (const piece of chunks(full, reply.chunkSize)) {
            await pause();
            if (block.type === "text") block.text += piece;
            else block.thinking += piece;
            out.push({ type: isText ? "text_delta" : "thinking_delta", contentIndex: i, delta: piece });
          }
          out.push({ type: isText ? "text_end" : "thinking_end", contentIndex: i, content: full });
        }
        if (reply.error) throw new Error(reply.error);
        const u = reply.usage ?? {};
        Object.assign(msg.usage, { input: u.input ?? 0, output: u.output ?? 0, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0 });
        msg.stopReason = reply.stopReason ?? (msg.content.some((c) => c.type === "toolCall") ? "toolUse" : "stop");
      } catch (err) {
        msg.stopReason = signal.aborted ? "aborted" : "error";
        msg.errorMessage = signal.aborted ? "The operation was aborted." : err instanceof Error ? err.message : String(err);
      }
      priceUsage(msg.usage, req.model);
      out.end(msg);
    })();
    return out;
  };
}

function chunks(text: string, size: number | undefined): string[] {
  if (size && size > 0) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.match(/\S+\s*|\s+/g) ?? [text];
}
