/**
 * The environment variables the reference agent reads a provider's key from (its
 * docs/providers.md table), keyed by pion's provider id (models.dev's) where the two differ.
 * They are read before models.dev's names, so a user coming from the reference keeps the
 * variables they already export. Pure data.
 */

/** Reference names, per pion provider id. */
const REFERENCE_ENV: Record<string, readonly string[]> = {
  // ANTHROPIC_AUTH_TOKEN goes out as `Authorization: Bearer`, the other two as the API key.
  anthropic: ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
  // Only a Copilot token: a plain GITHUB_TOKEN (any CI has one) is not a Copilot login.
  "github-copilot": ["COPILOT_GITHUB_TOKEN"],
  google: ["GEMINI_API_KEY"],
  "google-vertex": ["GOOGLE_CLOUD_API_KEY"],
  // Never read as a key (ambient.ts): listed so the credential guard masks them.
  "amazon-bedrock": ["AWS_BEARER_TOKEN_BEDROCK", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"],
  azure: ["AZURE_OPENAI_API_KEY"],
  "azure-openai-responses": ["AZURE_OPENAI_API_KEY"],
  zai: ["ZAI_API_KEY"],
  "zai-coding-cn": ["ZAI_CODING_CN_API_KEY"],
  "zhipuai-coding-plan": ["ZAI_CODING_CN_API_KEY"],
  llama: ["META_API_KEY"],
  meta: ["META_API_KEY"],
  "fireworks-ai": ["FIREWORKS_API_KEY"],
  togetherai: ["TOGETHER_API_KEY"],
  vercel: ["AI_GATEWAY_API_KEY"],
  "vercel-ai-gateway": ["AI_GATEWAY_API_KEY"],
  "kimi-for-coding": ["KIMI_API_KEY"],
  "kimi-coding": ["KIMI_API_KEY"],
  "minimax-cn": ["MINIMAX_CN_API_KEY"],
  "cloudflare-workers-ai": ["CLOUDFLARE_API_KEY"],
  "cloudflare-ai-gateway": ["CLOUDFLARE_API_KEY"],
  "ant-ling": ["ANT_LING_API_KEY"],
  typesafe: ["TYPESAFE_API_KEY"],
  radius: ["RADIUS_API_KEY"],
  "qwen-token-plan": ["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
  "qwen-token-plan-cn": ["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
  "qwen-token-plan-individual": ["QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
  "qwen-token-plan-individual-cn": ["QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
  // models.dev's Qwen token plans (one id per region for both of the reference's plans).
  "alibaba-token-plan": ["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
  "alibaba-token-plan-cn": ["QWEN_TOKEN_PLAN_TEAM_CN_API_KEY", "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY", "QWEN_TOKEN_PLAN_CN_API_KEY"],
  "xiaomi-token-plan-cn": ["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
  "xiaomi-token-plan-ams": ["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
  "xiaomi-token-plan-sgp": ["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
};

/** The reference's ids for pion's providers where the two differ (auth.json is keyed by the reference's). */
const REFERENCE_IDS: Record<string, readonly string[]> = {
  llama: ["meta"],
  "fireworks-ai": ["fireworks"],
  togetherai: ["together"],
  vercel: ["vercel-ai-gateway"],
  "kimi-for-coding": ["kimi-coding"],
  "zhipuai-coding-plan": ["zai-coding-cn"],
};

/** pion's provider id for one of the reference's ids (the id itself where they agree). */
export const pionProviderId = (referenceId: string): string => Object.keys(REFERENCE_IDS).find((id) => REFERENCE_IDS[id]!.includes(referenceId)) ?? referenceId;

/** The auth.json ids a provider's credential may be stored under: its own, then the reference's. */
export const authIds = (provider: string): string[] => [provider, ...(REFERENCE_IDS[provider] ?? [])];

/** Every variable name of the table (test set-up scrubs them from the developer's environment). */
export const referenceEnvNames = (): string[] => [...new Set(Object.values(REFERENCE_ENV).flat())];

/** Catalog names a provider must not be enabled by (see github-copilot above). */
const REFUSED: Record<string, readonly string[]> = { "github-copilot": ["GITHUB_TOKEN"] };

/** The variable Anthropic's key goes out from as a Bearer token rather than an API key. */
export const BEARER_ENV = "ANTHROPIC_AUTH_TOKEN";

/**
 * The variables a provider's key is read from, in order: the reference's names, then the
 * catalog's (`catalogNames`), without duplicates or refused names.
 */
export function providerEnvNames(provider: string, catalogNames: readonly string[] = []): string[] {
  // Most providers: the catalog's names alone (start-up asks this of every provider).
  if (!Object.hasOwn(REFERENCE_ENV, provider) && !Object.hasOwn(REFUSED, provider)) return catalogNames as string[];
  const refused = REFUSED[provider] ?? [];
  const names = [...(REFERENCE_ENV[provider] ?? []), ...catalogNames].filter((n) => !refused.includes(n));
  return [...new Set(names)];
}
