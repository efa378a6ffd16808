/**
 * What a request needs when its Anthropic credential is a Claude subscription's OAuth token
 * (an auth.json login or ANTHROPIC_OAUTH_TOKEN) rather than an API key: Bearer auth, the
 * OAuth beta flags, and a system prompt that opens with Claude Code's identity line (the API
 * refuses these tokens otherwise). Told apart by the token's prefix, as the reference does.
 */
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages/messages";

export const isAnthropicOAuthToken = (key: string | undefined): key is string => key !== undefined && key.includes("sk-ant-oat");

/** The headers an OAuth token goes out with (before the model's own, which may replace them). */
export const oauthHeaders = (token: string): Record<string, string> => ({
  Authorization: `Bearer ${token}`,
  "anthropic-beta": "claude-code-20250219,oauth-2025-04-20",
  "anthropic-dangerous-direct-browser-access": "true",
  "x-app": "cli",
});

const IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";

/** `params` with the identity line as the first system block. */
export function withClaudeCodeIdentity(params: MessageCreateParamsStreaming): MessageCreateParamsStreaming {
  const own = typeof params.system === "string" ? [{ type: "text" as const, text: params.system }] : (params.system ?? []);
  return { ...params, system: [{ type: "text", text: IDENTITY }, ...own] };
}
