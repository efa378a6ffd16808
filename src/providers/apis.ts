/**
 * The wire APIs pion has an adapter for (index.ts maps each to its adapter). A models.json
 * provider or model on any other API (mistral-conversations, openai-codex-responses, …) is
 * skipped with a warning; adding an adapter means adding its name here.
 */
export const IMPLEMENTED_APIS = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai", "bedrock-converse-stream", "azure-openai-responses", "google-vertex", "anthropic-vertex"] as const;

export type ImplementedApi = (typeof IMPLEMENTED_APIS)[number];

export const isImplementedApi = (api: string): api is ImplementedApi => (IMPLEMENTED_APIS as readonly string[]).includes(api);
