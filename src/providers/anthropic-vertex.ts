import { runAnthropic } from "./anthropic.ts";
import { requestHeaders } from "./compat.ts";
import { sdkLogger } from "./sdk-warnings.ts";
import type { StreamFn } from "./types.ts";

/**
 * Claude on Vertex AI through `@anthropic-ai/vertex-sdk` (loaded on the first request): the same
 * Messages request as the direct API (anthropic.ts builds it, cache points and thinking included),
 * which the SDK moves to `…/publishers/anthropic/models/<id>:streamRawPredict` with an OAuth token
 * from Application Default Credentials, in GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT and
 * GOOGLE_CLOUD_LOCATION. A base URL that is not a googleapis.com one replaces the regional endpoint.
 */
export const streamAnthropicVertex: StreamFn = (req, signal) =>
  runAnthropic(req, signal, false, async () => {
    const { AnthropicVertex } = await import("@anthropic-ai/vertex-sdk");
    const env = process.env;
    const region = env.GOOGLE_CLOUD_LOCATION || env.CLOUD_ML_REGION;
    if (!region) throw new Error("Claude on Vertex AI needs GOOGLE_CLOUD_LOCATION (and GOOGLE_CLOUD_PROJECT) with Application Default Credentials");
    const custom = req.model.baseUrl && !/\.googleapis\.com(\/|$)/.test(req.model.baseUrl) ? { baseURL: req.model.baseUrl } : {};
    return new AnthropicVertex({
      region,
      projectId: env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT || null,
      ...custom,
      maxRetries: 0,
      logger: sdkLogger,
      defaultHeaders: { ...requestHeaders(req), ...req.authHeaders },
    });
  });
