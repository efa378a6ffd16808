import { AMBIENT_KEY } from "./ambient.ts";
import { streamGenAi } from "./google.ts";
import type { StreamFn } from "./types.ts";

/**
 * Gemini on Vertex AI through `@google/genai` in Vertex mode: with GOOGLE_CLOUD_API_KEY (express
 * mode, the key alone), else Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS or
 * gcloud's login; the SDK's google-auth-library fetches and refreshes the OAuth token) in
 * GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT and GOOGLE_CLOUD_LOCATION. A base URL that is not a
 * googleapis.com one replaces the regional endpoint (a proxy, the tests' fake).
 */
export const streamVertex: StreamFn = (req, signal) =>
  streamGenAi(req, signal, (headers) => {
    const env = process.env;
    const custom = req.model.baseUrl && !/\.googleapis\.com(\/|$)/.test(req.model.baseUrl) ? { baseUrl: req.model.baseUrl } : {};
    const httpOptions = { ...custom, headers };
    if (req.apiKey && req.apiKey !== AMBIENT_KEY) return { vertexai: true, apiKey: req.apiKey, httpOptions };
    const project = env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT;
    const location = env.GOOGLE_CLOUD_LOCATION;
    if (!project || !location) throw new Error("Vertex AI needs GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION with Application Default Credentials, or GOOGLE_CLOUD_API_KEY");
    return { vertexai: true, project, location, httpOptions };
  });
