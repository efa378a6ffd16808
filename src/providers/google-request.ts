import type { Content, GenerateContentConfig, Part, ThinkingConfig } from "@google/genai";
import { mappedValue } from "./reasoning-params.ts";
import { clampThinkingLevel, thinkingBudget, thinkingControl } from "./thinking.ts";
import { sanitizeHistory } from "./transform.ts";
import type { AssistantMessage, ImageContent, LlmRequest, Model, TextContent, ToolResultMessage } from "./types.ts";

/**
 * The body of a Gemini `generateContent` request (Gemini API and Vertex AI take the same one):
 * `contents` in `user` / `model` turns and the `config` the SDK spreads beside them.
 */
export function googleRequest(req: LlmRequest, signal: AbortSignal): { model: string; contents: Content[]; config: GenerateContentConfig } {
  const { model } = req;
  const config: GenerateContentConfig = { abortSignal: signal, maxOutputTokens: model.maxTokens };
  if (req.systemPrompt) config.systemInstruction = req.systemPrompt;
  if (req.tools.length > 0) {
    // `parametersJsonSchema` takes JSON Schema as written; `parameters` would want Google's OpenAPI subset.
    config.tools = [{ functionDeclarations: req.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.parameters })) }];
  }
  const thinking = thinkingConfig(model, req);
  if (thinking) config.thinkingConfig = thinking;
  return { model: model.id, contents: googleContents(req), config };
}

/**
 * Gemini 3 takes a thinking level (the catalog lists effort values), Gemini 2.5 a token budget
 * (a `budget_tokens` range; 0 switches thinking off where the range starts at 0 or a toggle is listed).
 */
function thinkingConfig(model: Model, req: LlmRequest): ThinkingConfig | undefined {
  if (!model.reasoning) return undefined;
  const control = thinkingControl(model);
  const level = clampThinkingLevel(model, req.thinkingLevel);
  if (level === "off") return control.kind === "effort" ? undefined : { thinkingBudget: 0 };
  if (control.kind === "effort") return { includeThoughts: true, thinkingLevel: mappedValue(model, level).toUpperCase() as ThinkingConfig["thinkingLevel"] };
  if (control.kind === "toggle") return { includeThoughts: true };
  const range = control.kind === "budget" ? control : {};
  return { includeThoughts: true, thinkingBudget: thinkingBudget(level, range, model.maxTokens, req.thinkingBudgets).budget };
}

/** Gemini's signatures are base64 bytes; anything else would be refused by the API. */
const isSignature = (s: string | undefined): s is string => !!s && s.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(s);

/** Gemini 3 pairs calls with responses by id; earlier models refuse the field. */
const takesCallIds = (model: Model): boolean => {
  const major = /^gemini-(\d+)/.exec(model.id)?.[1];
  return major === undefined ? !model.id.startsWith("gemini") : Number(major) >= 3;
};

export function googleContents(req: LlmRequest): Content[] {
  const { model } = req;
  const images = model.input.includes("image");
  const out: Content[] = [];
  for (const m of sanitizeHistory(req.messages)) {
    if (m.role === "user") {
      const parts = userParts(m.content, images);
      if (parts.length > 0) out.push({ role: "user", parts });
    } else if (m.role === "assistant") {
      const parts = modelParts(m, model);
      if (parts.length > 0) out.push({ role: "model", parts });
    } else {
      const part = responsePart(m, model, images);
      // Every response to one turn's calls goes in a single user turn.
      const last = out.at(-1);
      if (last?.role === "user" && last.parts?.some((p) => p.functionResponse)) last.parts.push(part);
      else out.push({ role: "user", parts: [part] });
      // Before Gemini 3 a function response holds no images: they follow in a user turn of their own.
      const imgs = images && !takesCallIds(model) ? m.content.filter((c): c is ImageContent => c.type === "image") : [];
      if (imgs.length > 0) out.push({ role: "user", parts: [{ text: `Images returned by ${m.toolName}:` }, ...imgs.map(imagePart)] });
    }
  }
  return out;
}

const imagePart = (c: ImageContent): Part => ({ inlineData: { mimeType: c.mimeType, data: c.data } });
const IMAGE_OMITTED = "[image omitted: this model does not accept images]";

function userParts(content: string | (TextContent | ImageContent)[], images: boolean): Part[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  return content.flatMap((c): Part[] => (c.type === "text" ? (c.text ? [{ text: c.text }] : []) : [images ? imagePart(c) : { text: IMAGE_OMITTED }]));
}

/**
 * A reply of this very model goes back part for part with its signatures; another model's
 * thinking becomes plain text and its signatures are dropped (they are only valid for their maker).
 */
function modelParts(m: AssistantMessage, model: Model): Part[] {
  const own = m.api === model.api && m.provider === model.provider && m.model === model.id;
  const sig = (s: string | undefined) => (own && isSignature(s) ? { thoughtSignature: s } : {});
  const parts: Part[] = [];
  for (const c of m.content) {
    if (c.type === "text") {
      if (c.text.trim() || sig(c.textSignature).thoughtSignature) parts.push({ text: c.text, ...sig(c.textSignature) });
    } else if (c.type === "thinking") {
      if (own && (c.thinking.trim() || sig(c.thinkingSignature).thoughtSignature)) parts.push({ thought: true, text: c.thinking, ...sig(c.thinkingSignature) });
      else if (!own && !c.redacted && c.thinking.trim()) parts.push({ text: c.thinking });
    } else {
      parts.push({ functionCall: { name: c.name, args: c.arguments, ...(takesCallIds(model) ? { id: c.id } : {}) }, ...sig(c.thoughtSignature) });
    }
  }
  return parts;
}

function responsePart(m: ToolResultMessage, model: Model, images: boolean): Part {
  const text = m.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
  const all = images ? m.content.filter((c): c is ImageContent => c.type === "image") : [];
  const value = text.trim() ? text : all.length > 0 ? "(image attached)" : "";
  const nested = takesCallIds(model) ? all : [];
  return {
    functionResponse: {
      name: m.toolName,
      response: m.isError ? { error: value } : { output: value },
      ...(nested.length > 0 ? { parts: nested.map(imagePart) } : {}),
      ...(takesCallIds(model) ? { id: m.toolCallId } : {}),
    },
  };
}
