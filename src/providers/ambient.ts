/**
 * Cloud providers whose SDK finds its own credentials (AWS's chain, Google's Application Default
 * Credentials): pion holds no key for them, but counts them available when the environment has
 * what the SDK will use, as the reference does. The key is then a placeholder the adapter ignores.
 * Pure: reads only the environment it is given (and whether one file exists).
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

type Env = Record<string, string | undefined>;

export const AMBIENT_KEY = "<authenticated>";

/** The AWS SDK's sources, in the order its chain tries them (keys need both halves). */
const AWS_SOURCES = ["AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"];

function awsSource(env: Env): string | undefined {
  for (const name of AWS_SOURCES) {
    if (!env[name]) continue;
    if (name === "AWS_ACCESS_KEY_ID" && !env.AWS_SECRET_ACCESS_KEY) continue;
    return name;
  }
  return undefined;
}

/** ADC: a key file named by GOOGLE_APPLICATION_CREDENTIALS or gcloud's default one, plus a project and a location. */
function vertexSource(env: Env): string | undefined {
  const project = env.GOOGLE_CLOUD_PROJECT || env.GCLOUD_PROJECT;
  if (!project || !env.GOOGLE_CLOUD_LOCATION) return undefined;
  if (env.GOOGLE_APPLICATION_CREDENTIALS) return existsSync(env.GOOGLE_APPLICATION_CREDENTIALS) ? "GOOGLE_APPLICATION_CREDENTIALS" : undefined;
  const home = env.HOME || homedir();
  return existsSync(join(home, ".config", "gcloud", "application_default_credentials.json")) ? "gcloud application-default credentials" : undefined;
}

const ADC_HINT = "GOOGLE_CLOUD_PROJECT + GOOGLE_CLOUD_LOCATION + GOOGLE_APPLICATION_CREDENTIALS";

const AMBIENT: Record<string, { source: (env: Env) => string | undefined; hint: string[]; replacesKeys: boolean }> = {
  // AWS_ACCESS_KEY_ID is only half a credential: it never goes out as a key.
  "amazon-bedrock": { source: awsSource, hint: ["AWS_PROFILE", "AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"], replacesKeys: true },
  // GOOGLE_APPLICATION_CREDENTIALS holds a path: only GOOGLE_CLOUD_API_KEY (env-names.ts) is read as a key.
  "google-vertex": { source: vertexSource, hint: ["GOOGLE_CLOUD_API_KEY", ADC_HINT], replacesKeys: false },
  // Claude on Vertex takes only OAuth tokens.
  "google-vertex-anthropic": { source: vertexSource, hint: [ADC_HINT], replacesKeys: true },
};

/** Whether the provider's SDK authenticates itself; `replacesKeys`: its variables are never read as an API key. */
export const ambientProvider = (provider: string): { replacesKeys: boolean } | undefined => AMBIENT[provider];

/** The credential source the SDK will use, as a key origin, or undefined when there is none. */
export function ambientSource(provider: string, env: Env): string | undefined {
  return AMBIENT[provider]?.source(env);
}

/** What a "no credentials" message names for the provider. */
export const ambientHint = (provider: string): string[] => AMBIENT[provider]?.hint ?? [];
