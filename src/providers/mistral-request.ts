import { dataUrl, IMAGE_OMITTED } from "./openai-shared.ts";
import { clampThinkingLevel, thinkingControl } from "./thinking.ts";
import { sanitizeHistory } from "./transform.ts";
import type { AssistantMessage, ImageContent, LlmRequest, Model, TextContent, ToolResultMessage } from "./types.ts";

/**
 * The body of a request to Mistral's own chat completions endpoint (`mistral-conversations`).
 * It looks like OpenAI's but differs where it matters: content parts take `image_url` as a plain
 * string, thinking goes back as a `thinking` part holding text parts, assistant messages carry
 * `prefix: false`, tool messages carry the tool's name, and tool call ids are exactly nine
 * letters or digits (ids other providers made are mapped to such ids, the same way every time).
 */

type TextPart = { type: "text"; text: string };
type ImagePart = { type: "image_url"; image_url: string };
type ThinkingPart = { type: "thinking"; thinking: TextPart[] };

export type MistralMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | (TextPart | ImagePart)[] }
  | { role: "assistant"; prefix: false; content?: (TextPart | ThinkingPart)[]; tool_calls?: MistralToolCall[] }
  | { role: "tool"; tool_call_id: string; name: string; content: (TextPart | ImagePart)[] };

export interface MistralToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  index: number;
}

export interface MistralBody {
  model: string;
  stream: true;
  messages: MistralMessage[];
  tools?: { type: "function"; function: { name: string; description: string; parameters: Record<string, unknown>; strict: boolean } }[];
  max_tokens: number;
  reasoning_effort?: string;
  prompt_mode?: "reasoning";
  prompt_cache_key?: string;
  [field: string]: unknown;
}

export const MISTRAL_ID_LENGTH = 9;
const ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** Nine base-62 characters from a 64-bit hash of `seed`: stable across requests, so a replayed history keeps its ids. */
export function mistralIdFrom(seed: string): string {
  let h = BigInt.asUintN(64, BigInt(Bun.hash(seed)));
  let id = "";
  for (let i = 0; i < MISTRAL_ID_LENGTH; i++) {
    id += ID_CHARS[Number(h % 62n)];
    h /= 62n;
  }
  return id;
}

/**
 * Maps tool call ids to ids Mistral accepts: an id that is nine letters or digits once other
 * characters are dropped stays as that; any other gets a hashed one. Two ids never share one.
 */
export function mistralIdMapper(): (id: string) => string {
  const byId = new Map<string, string>();
  const taken = new Set<string>();
  return (id) => {
    const known = byId.get(id);
    if (known) return known;
    const plain = id.replace(/[^a-zA-Z0-9]/g, "");
    let candidate = plain.length === MISTRAL_ID_LENGTH ? plain : mistralIdFrom(plain || id);
    for (let n = 1; taken.has(candidate); n++) candidate = mistralIdFrom(`${plain || id}#${n}`);
    byId.set(id, candidate);
    taken.add(candidate);
    return candidate;
  };
}

/**
 * The reasoning fields: a models.json `thinkingLevelMap` gives `reasoning_effort` (the level's
 * value, "high" for a level it leaves out; "off" sends its `off` value if it has one, else nothing); a catalog
 * model listing efforts sends the level as the effort ("off" as `none` where listed); any other
 * reasoning model is switched on with `prompt_mode: "reasoning"`.
 */
export function mistralReasoning(model: Model, requested: LlmRequest["thinkingLevel"]): Pick<MistralBody, "reasoning_effort" | "prompt_mode"> {
  if (!model.reasoning) return {};
  // "off" is not clamped: a model that cannot switch reasoning off gets no field, so its default.
  const level = requested === "off" ? "off" : clampThinkingLevel(model, requested);
  const map = model.thinkingLevelMap;
  if (map) {
    if (level !== "off") return { reasoning_effort: map[level] ?? "high" };
    return typeof map.off === "string" ? { reasoning_effort: map.off } : {};
  }
  const control = thinkingControl(model);
  if (control.kind === "effort") {
    if (level !== "off") return { reasoning_effort: level };
    return control.offIsNone ? { reasoning_effort: "none" } : {};
  }
  return level === "off" ? {} : { prompt_mode: "reasoning" };
}

export function toMistralBody(req: LlmRequest): MistralBody {
  const { model } = req;
  const body: MistralBody = { model: model.id, stream: true, messages: toMistralMessages(req), max_tokens: model.maxTokens };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters, strict: false } }));
  }
  Object.assign(body, mistralReasoning(model, req.thinkingLevel));
  // Mistral routes requests with one key to the same cache (the x-affinity header says the same).
  if (req.sessionId) body.prompt_cache_key = req.sessionId;
  return body;
}

const sameModel = (m: AssistantMessage, model: Model) => m.provider === model.provider && m.api === model.api && m.model === model.id;

export function toMistralMessages(req: LlmRequest): MistralMessage[] {
  const { model } = req;
  const images = model.input.includes("image");
  const idOf = mistralIdMapper();
  // Ids of foreign tool calls, mapped; a result follows its call's id.
  const mapped = new Map<string, string>();
  const out: MistralMessage[] = [];
  if (req.systemPrompt) out.push({ role: "system", content: req.systemPrompt });
  for (const m of sanitizeHistory(req.messages)) {
    if (m.role === "user") {
      const content = typeof m.content === "string" ? m.content : parts(m.content, images);
      if (content.length > 0 || typeof content === "string") out.push({ role: "user", content });
    } else if (m.role === "assistant") {
      const native = sameModel(m, model);
      const content: (TextPart | ThinkingPart)[] = [];
      const calls: MistralToolCall[] = [];
      for (const c of m.content) {
        if (c.type === "text") {
          if (c.text.trim()) content.push({ type: "text", text: c.text });
        } else if (c.type === "thinking") {
          // Another model's reasoning is its own: it is not shown to this one.
          if (native && !c.redacted && c.thinking.trim()) content.push({ type: "thinking", thinking: [{ type: "text", text: c.thinking }] });
        } else {
          const id = native ? c.id : idOf(c.id);
          if (id !== c.id) mapped.set(c.id, id);
          calls.push({ id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) }, index: 0 });
        }
      }
      if (content.length === 0 && calls.length === 0) continue;
      out.push({ role: "assistant", prefix: false, ...(content.length > 0 ? { content } : {}), ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    } else {
      out.push({ role: "tool", tool_call_id: mapped.get(m.toolCallId) ?? m.toolCallId, name: m.toolName, content: toolContent(m, images) });
    }
  }
  return out;
}

/** A user message's parts; without image input, each run of images becomes one placeholder. */
function parts(content: (TextContent | ImageContent)[], images: boolean): (TextPart | ImagePart)[] {
  const out: (TextPart | ImagePart)[] = [];
  for (const c of content) {
    if (c.type === "text") out.push({ type: "text", text: c.text });
    else if (images) out.push({ type: "image_url", image_url: dataUrl(c.data, c.mimeType) });
    else if (out.at(-1)?.type !== "text" || (out.at(-1) as TextPart).text !== IMAGE_OMITTED) out.push({ type: "text", text: IMAGE_OMITTED });
  }
  return out;
}

/**
 * A tool result as one text part (Mistral's tool messages have no error flag, so a failure says
 * so in the text), then its images for a model that takes them.
 */
function toolContent(m: ToolResultMessage, images: boolean): (TextPart | ImagePart)[] {
  const text = m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n").trim();
  const imgs = m.content.filter((c): c is ImageContent => c.type === "image");
  const omitted = imgs.length > 0 && !images;
  const notes = text ? (omitted ? `${text}\n${IMAGE_OMITTED}` : text) : imgs.length > 0 ? (images ? "(image attached)" : IMAGE_OMITTED) : "";
  const body = `${m.isError ? "[error] " : ""}${notes || "(empty)"}`;
  return [{ type: "text", text: body }, ...(images ? imgs.map((c): ImagePart => ({ type: "image_url", image_url: dataUrl(c.data, c.mimeType) })) : [])];
}
