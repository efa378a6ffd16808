import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { EPHEMERAL, markConversation } from "./cache-points.ts";
import type { Model } from "./types.ts";

/**
 * What a Chat Completions request sends for prompt caching, server by server, as each one
 * documents it. The server is known by the host of the model's base URL; whether the model
 * caches at all comes from its catalog prices (a cache-read price: the provider caches it; a
 * cache-write price as well: writes are explicit and billed, the Anthropic way). Any other
 * server gets nothing, since a field it does not know may be refused.
 *
 * - api.openai.com, a model with a cache-read price: `prompt_cache_key` = the session id, which
 *   OpenAI uses to route one conversation's requests to the same cache.
 * - openrouter.ai, a model with a cache-read price: the `x-session-id` header, OpenRouter's
 *   sticky-routing key (it otherwise hashes the first messages, which a compaction changes);
 *   with a cache-write price too (Claude, Gemini, Qwen there): `cache_control` breakpoints on
 *   the system prompt, the last tool and the conversation, placed as for Anthropic.
 * - api.x.ai, a model with a cache-read price: the `x-grok-conv-id` header = the session id.
 */
export interface CompletionsCaching {
  promptCacheKey?: string;
  headers?: Record<string, string>;
  /** Put Anthropic-style `cache_control` breakpoints on content parts and the last tool. */
  breakpoints: boolean;
}

export function completionsCaching(model: Model, sessionId: string | undefined): CompletionsCaching {
  const reads = model.cost.cacheRead > 0;
  switch (hostOf(model.baseUrl)) {
    case "api.openai.com":
      return { breakpoints: false, ...(reads && sessionId ? { promptCacheKey: sessionId } : {}) };
    case "openrouter.ai":
      return { breakpoints: reads && model.cost.cacheWrite > 0, ...(reads && sessionId ? { headers: { "x-session-id": sessionId } } : {}) };
    case "api.x.ai":
      return { breakpoints: false, ...(reads && sessionId ? { headers: { "x-grok-conv-id": sessionId } } : {}) };
    default:
      return { breakpoints: false };
  }
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

type Marked<T> = T & { cache_control?: typeof EPHEMERAL };

/**
 * The breakpoints of a request to a server that takes `cache_control` on content parts: the
 * system message, the last tool, and the conversation as markConversation places them (four in
 * all). Only text parts carry one; a string content becomes one text part to carry it.
 */
export function markCompletionsCache(messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[] | undefined, conversation: boolean): void {
  const system = messages[0]?.role === "system" || messages[0]?.role === "developer" ? messages[0] : undefined;
  if (system) markLastText(system);
  const last = tools?.at(-1);
  if (last) (last as Marked<ChatCompletionTool>).cache_control = EPHEMERAL;
  if (conversation) markConversation(system ? messages.slice(1) : messages, markLastText);
}

function markLastText(m: ChatCompletionMessageParam): boolean {
  const content = m.content;
  if (typeof content === "string") {
    if (!content) return false;
    (m as { content: unknown }).content = [{ type: "text", text: content, cache_control: EPHEMERAL }];
    return true;
  }
  if (!Array.isArray(content)) return false;
  for (let i = content.length - 1; i >= 0; i--) {
    const part = content[i]!;
    if (part.type === "text" && part.text) {
      (part as Marked<typeof part>).cache_control = EPHEMERAL;
      return true;
    }
  }
  return false;
}
