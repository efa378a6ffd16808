import { addedApi, providerStream, type ImplementedApi } from "./apis.ts";
import { failedStream, laterStream } from "./event-stream.ts";
import type { Model, StreamFn } from "./types.ts";
import { errorMessage } from "../util/errors.ts";

// Each API's adapter is loaded with its first request: start-up pays for none of them.
const adapters = {
  "anthropic-messages": () => import("./anthropic.ts").then((m) => m.streamAnthropic),
  "openai-completions": () => import("./openai-completions.ts").then((m) => m.streamOpenAICompletions),
  "openai-responses": () => import("./openai-responses.ts").then((m) => m.streamOpenAIResponses),
  "google-generative-ai": () => import("./google.ts").then((m) => m.streamGoogle),
  "bedrock-converse-stream": () => import("./bedrock.ts").then((m) => m.streamBedrock),
  "azure-openai-responses": () => import("./azure.ts").then((m) => m.streamAzureResponses),
  "google-vertex": () => import("./google-vertex.ts").then((m) => m.streamVertex),
  "anthropic-vertex": () => import("./anthropic-vertex.ts").then((m) => m.streamAnthropicVertex),
  "mistral-conversations": () => import("./mistral.ts").then((m) => m.streamMistral),
  "openai-codex-responses": () => import("./openai-codex.ts").then((m) => m.streamOpenAICodex),
  "pi-messages": () => import("./pi-messages.ts").then((m) => m.streamPiMessages),
  // Not an API name: Chat Completions on the azure provider (adapterOf).
  "azure-openai-completions": () => import("./azure.ts").then((m) => m.streamAzureCompletions),
} satisfies Record<ImplementedApi | "azure-openai-completions", () => Promise<StreamFn>>;
const loaded = new Map<string, StreamFn>();

/**
 * The adapter for a model: its API's, except that the azure provider's Chat Completions models
 * (Foundry's, as the reference configures them) go through Azure's endpoint and key header.
 */
const adapterOf = (model: Model): string => (model.provider === "azure" && model.api === "openai-completions" ? "azure-openai-completions" : model.api);

/** Route a request to the adapter of its model's API: one an extension added, else pion's own. */
export const streamByApi: StreamFn = (req, signal) => (providerStream(req.model.provider, req.model.api) ?? addedApi(req.model.api) ?? streamBuiltIn)(req, signal);

/** pion's own adapter for the request's API, whatever extensions added. */
export const streamBuiltIn: StreamFn = (req, signal) => {
  const api = adapterOf(req.model);
  const ready = loaded.get(api);
  if (ready) return ready(req, signal);
  if (!(api in adapters)) return failedStream(req, `API "${api}" is not implemented yet`);
  const load = adapters[api as keyof typeof adapters]().then((fn) => {
    loaded.set(api, fn);
    return fn(req, signal);
  });
  return laterStream(req, load, (err) => `The ${api} adapter did not load: ${errorMessage(err)}`);
};
