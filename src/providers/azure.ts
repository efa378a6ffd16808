import { azureTarget } from "./azure-config.ts";
import { consumeCompletions } from "./openai-completions.ts";
import { consumeResponses } from "./openai-responses.ts";
import { runOpenAIStream } from "./openai-shared.ts";
import { sdkLogger } from "./sdk-warnings.ts";
import type { StreamFn } from "./types.ts";

/**
 * Azure OpenAI's Responses API through the `openai` SDK's Azure client: the key in the `api-key`
 * header, `api-version` in the query, the deployment as the body's model. The request body is
 * OpenAI's own (openai-responses.ts builds it).
 */
export const streamAzureResponses: StreamFn = (req, signal) => {
  let deployment = req.model.id;
  return runOpenAIStream(
    req,
    signal,
    (ctx) => consumeResponses(req, ctx, deployment),
    (sdk, headers) => {
      const target = azureTarget(req.model, process.env);
      deployment = target.deployment;
      return new sdk.AzureOpenAI({ apiKey: req.apiKey ?? "", apiVersion: target.apiVersion, baseURL: target.baseUrl, maxRetries: 0, defaultHeaders: headers, logger: sdkLogger });
    },
  );
};

/**
 * Chat Completions on the azure provider (Foundry models, models.json `api: "openai-completions"`):
 * Azure's v1 API takes OpenAI's own client at `<base>/chat/completions` (the Azure client would put
 * `/deployments/<name>` in the path, which only the dated API versions serve), with the key in `api-key`
 * and the deployment as the body's model.
 */
export const streamAzureCompletions: StreamFn = (req, signal) => {
  let deployment = req.model.id;
  return runOpenAIStream(
    req,
    signal,
    (ctx) => consumeCompletions(req, ctx, deployment),
    (sdk, headers) => {
      const target = azureTarget(req.model, process.env);
      deployment = target.deployment;
      return new sdk.default({
        apiKey: req.apiKey ?? "",
        baseURL: target.baseUrl,
        maxRetries: 0,
        defaultHeaders: { "api-key": req.apiKey ?? "", Authorization: null, ...headers } as unknown as Record<string, string>,
        defaultQuery: target.apiVersion === "v1" ? undefined : { "api-version": target.apiVersion },
        organization: null,
        project: null,
        logger: sdkLogger,
      });
    },
  );
};
