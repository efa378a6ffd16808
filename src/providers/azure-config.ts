/**
 * Where an Azure OpenAI request goes, from the reference's variables: AZURE_OPENAI_BASE_URL, else
 * AZURE_OPENAI_RESOURCE_NAME's `https://<name>.openai.azure.com/openai/v1`, else the model's base
 * URL (the catalog's is a placeholder that needs one of the two); a resource's root URL gets the
 * `/openai/v1` path. AZURE_OPENAI_DEPLOYMENT_NAME_MAP (`model=deployment,…`) names deployments
 * that differ from the model id; AZURE_OPENAI_API_VERSION overrides `v1`. Pure.
 */
type Env = Record<string, string | undefined>;

/** The catalog's base URL for the azure provider: no resource is known until the user names one. */
export const AZURE_PLACEHOLDER_URL = "https://your-resource.openai.azure.com/openai/v1";

const AZURE_HOSTS = [".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com"];

export interface AzureTarget {
  baseUrl: string;
  apiVersion: string;
  deployment: string;
}

export function azureTarget(model: { id: string; baseUrl: string }, env: Env): AzureTarget {
  const configured = env.AZURE_OPENAI_BASE_URL?.trim() || (env.AZURE_OPENAI_RESOURCE_NAME ? `https://${env.AZURE_OPENAI_RESOURCE_NAME.trim()}.openai.azure.com/openai/v1` : undefined);
  const base = configured ?? (model.baseUrl === AZURE_PLACEHOLDER_URL ? undefined : model.baseUrl);
  if (!base) throw new Error("Azure OpenAI needs its resource: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME");
  return { baseUrl: normalize(base), apiVersion: env.AZURE_OPENAI_API_VERSION?.trim() || "v1", deployment: deploymentOf(model.id, env.AZURE_OPENAI_DEPLOYMENT_NAME_MAP) };
}

function normalize(raw: string): string {
  const url = new URL(raw.trim());
  const path = url.pathname.replace(/\/+$/, "");
  if (AZURE_HOSTS.some((h) => url.hostname.endsWith(h)) && ["", "/openai", "/openai/v1/responses"].includes(path)) {
    url.pathname = "/openai/v1";
    url.search = "";
  }
  return url.toString().replace(/\/+$/, "");
}

function deploymentOf(modelId: string, map: string | undefined): string {
  for (const entry of (map ?? "").split(",")) {
    const eq = entry.indexOf("=");
    if (eq > 0 && entry.slice(0, eq).trim() === modelId && entry.slice(eq + 1).trim()) return entry.slice(eq + 1).trim();
  }
  return modelId;
}
