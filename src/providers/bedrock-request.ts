import type { ContentBlock, ConverseStreamCommandInput, ImageFormat, Message as BedrockMessage, SystemContentBlock, Tool } from "@aws-sdk/client-bedrock-runtime";
import { anthropicReasoning } from "./reasoning-params.ts";
import { anthropicShaped, clampThinkingLevel } from "./thinking.ts";
import { sanitizeHistory } from "./transform.ts";
import type { AssistantMessage, ImageContent, LlmRequest, Model, TextContent } from "./types.ts";


const CACHE_POINT = { cachePoint: { type: "default" } } as const;

/** The ConverseStream input for one request (docs/cloud-providers.md keeps the wire facts). */
export function bedrockInput(req: LlmRequest): ConverseStreamCommandInput {
  const { model } = req;
  // Claude on Bedrock takes Anthropic's thinking fields; it and the models the catalog prices cache reads for (Nova) take cache points.
  const claude = anthropicShaped(model);
  const caches = claude || model.cost.cacheRead > 0;
  const input: ConverseStreamCommandInput = { modelId: model.id, messages: bedrockMessages(req), inferenceConfig: { maxTokens: model.maxTokens } };
  if (req.systemPrompt) {
    const system: SystemContentBlock[] = [{ text: req.systemPrompt }];
    if (caches) system.push(CACHE_POINT);
    input.system = system;
  }
  if (req.tools.length > 0) {
    const tools: Tool[] = req.tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.parameters as never } } }));
    input.toolConfig = { tools };
  }
  if (claude && model.reasoning) {
    const level = clampThinkingLevel(model, req.thinkingLevel);
    const r = anthropicReasoning(model, level, req.thinkingBudgets);
    const fields: Record<string, unknown> = {};
    if (r.thinking && r.thinking.type !== "disabled") fields.thinking = r.thinking;
    if (r.output_config) fields.output_config = r.output_config;
    if (Object.keys(fields).length > 0) input.additionalModelRequestFields = fields as never;
    input.inferenceConfig = { maxTokens: r.max_tokens };
  }
  // The last user turn is where the next request's cache read starts.
  if (caches && req.cacheConversation !== false) {
    const last = input.messages?.findLast((m) => m.role === "user");
    last?.content?.push(CACHE_POINT);
  }
  return input;
}

const FORMATS: Record<string, ImageFormat> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp" };
const IMAGE_OMITTED = "[image omitted: this model does not accept images]";

function imageBlock(c: ImageContent, images: boolean): ContentBlock {
  const format = FORMATS[c.mimeType];
  if (!images || !format) return { text: IMAGE_OMITTED };
  return { image: { format, source: { bytes: Buffer.from(c.data, "base64") } } };
}

function userBlocks(content: string | (TextContent | ImageContent)[], images: boolean): ContentBlock[] {
  if (typeof content === "string") return [{ text: content || "(empty)" }];
  const out = content.flatMap((c): ContentBlock[] => (c.type === "text" ? (c.text ? [{ text: c.text }] : []) : [imageBlock(c, images)]));
  return out.length > 0 ? out : [{ text: "(empty)" }];
}

export function bedrockMessages(req: LlmRequest): BedrockMessage[] {
  const { model } = req;
  const images = model.input.includes("image");
  const out: BedrockMessage[] = [];
  const pushUser = (blocks: ContentBlock[], merge: boolean) => {
    const last = out.at(-1);
    // Converse alternates roles: tool results of one turn share one user message.
    if (merge && last?.role === "user" && last.content?.some((b) => b.toolResult)) last.content.push(...blocks);
    else out.push({ role: "user", content: blocks });
  };
  for (const m of sanitizeHistory(req.messages)) {
    if (m.role === "user") pushUser(userBlocks(m.content, images), false);
    else if (m.role === "assistant") {
      const blocks = assistantBlocks(m, model);
      if (blocks.length > 0) out.push({ role: "assistant", content: blocks });
    } else {
      const content = m.content.map((c) => (c.type === "text" ? { text: c.text } : imageBlock(c, images))) as never[];
      pushUser([{ toolResult: { toolUseId: m.toolCallId, content: content.length > 0 ? content : [{ text: "(empty)" }], status: m.isError ? "error" : "success" } }], true);
    }
  }
  return out;
}

/** Reasoning goes back with its signature only to the model that made it; another's becomes text. */
function assistantBlocks(m: AssistantMessage, model: Model): ContentBlock[] {
  const own = m.api === model.api && m.provider === model.provider && m.model === model.id;
  const out: ContentBlock[] = [];
  for (const c of m.content) {
    if (c.type === "text") {
      if (c.text.trim()) out.push({ text: c.text });
    } else if (c.type === "thinking") {
      if (own && c.redacted && c.thinkingSignature) out.push({ reasoningContent: { redactedContent: Buffer.from(c.thinkingSignature, "base64") } });
      else if (own && c.thinkingSignature) out.push({ reasoningContent: { reasoningText: { text: c.thinking, signature: c.thinkingSignature } } });
      else if (!c.redacted && c.thinking.trim()) out.push({ text: c.thinking });
    } else {
      out.push({ toolUse: { toolUseId: c.id, name: c.name, input: c.arguments as never } });
    }
  }
  return out;
}
