/**
 * pi-ai's client identity helpers: the `User-Agent` a client sends (detailed, short or custom),
 * the attribution headers OpenRouter, NVIDIA NIM and OpenCode read, OpenCode's session header, and
 * `withClientIdentity`, which gives every request of a `Models` collection a default identity.
 * Pure functions of their arguments (and of the runtime, for the detailed User-Agent).
 */
import { VERSION } from "../../config.ts";
import { detailedUserAgent } from "../../providers/user-agent.ts";

export interface ClientIdentity {
  userAgent?: "detailed" | "short" | { custom: string };
  attribution?: { name: string; url: string; categories?: string[] } | null | false;
  version?: string;
}
type Target = { provider: string; baseUrl: string };

/** pi's attribution, as the reference's agents send it. */
export const PI_ATTRIBUTION = { name: "pi", url: "https://pi.dev", categories: ["cli-agent"] };

/** Identities merged field by field: a later source's defined fields win. */
export function mergeClientIdentity(...sources: (ClientIdentity | undefined)[]): ClientIdentity | undefined {
  let merged: ClientIdentity | undefined;
  for (const source of sources) {
    if (!source) continue;
    merged = { ...merged };
    for (const key of ["userAgent", "attribution", "version"] as const) {
      if (source[key] !== undefined) (merged as Record<string, unknown>)[key] = source[key];
    }
  }
  return merged;
}

/** The version a detailed User-Agent names: the identity's, else this client's (pion's). */
export const getClientVersion = (identity?: ClientIdentity): string => identity?.version ?? VERSION;

export function formatUserAgent(identity?: ClientIdentity): string {
  const mode = identity?.userAgent ?? "detailed";
  if (typeof mode === "object") return mode.custom;
  if (mode === "short") return "pi";
  return detailedUserAgent(getClientVersion(identity));
}

function hostIs(baseUrl: string, host: string): boolean {
  try {
    return new URL(baseUrl).hostname === host;
  } catch {
    return false;
  }
}

const isOpenRouter = (t: Target) => t.provider === "openrouter" || t.baseUrl.includes("openrouter.ai");
const isNvidiaNim = (t: Target) => t.provider === "nvidia" || hostIs(t.baseUrl, "integrate.api.nvidia.com");
const isOpenCode = (t: Target) => t.provider === "opencode" || t.provider === "opencode-go" || hostIs(t.baseUrl, "opencode.ai");

/** The headers that credit the client to the target's service; none without an attribution. */
export function getAttributionHeaders(target: Target, identity?: ClientIdentity): Record<string, string> {
  const a = identity?.attribution;
  if (!a) return {};
  if (isOpenRouter(target)) {
    const categories: Record<string, string> = a.categories?.length ? { "X-OpenRouter-Categories": a.categories.join(",") } : {};
    return { "HTTP-Referer": a.url, "X-OpenRouter-Title": a.name, ...categories };
  }
  // NVIDIA wants the origin capitalized ("Pi").
  if (isNvidiaNim(target)) return { "X-BILLING-INVOKE-ORIGIN": a.name.charAt(0).toUpperCase() + a.name.slice(1) };
  if (isOpenCode(target)) return { "x-opencode-client": a.name };
  return {};
}

/** OpenCode routes a conversation by this header; undefined without a session or for another target. */
export const getOpenCodeSessionHeaders = (target: Target, sessionId?: string): Record<string, string> | undefined =>
  sessionId && isOpenCode(target) ? { "x-opencode-session": sessionId } : undefined;

/** The headers an identity adds under a request's own: User-Agent and attribution. */
export const getIdentityHeaders = (target: Target, identity?: ClientIdentity): Record<string, string> => ({ "User-Agent": formatUserAgent(identity), ...getAttributionHeaders(target, identity) });

type Fn = (...args: unknown[]) => unknown;
/** Methods whose last argument is the request options, which take the identity. */
const REQUESTS = ["stream", "complete", "streamSimple", "completeSimple", "streamDeferred", "fetchDeferred", "cancelDeferred", "generateImages", "classify"];
const PASSED = ["getProviders", "getProvider", "getModels", "getModel", "getModelsOfType", "getModelOfType", "getAllModels", "refresh", "checkAuth", "getAvailable", "getAvailableOfType", "getAllAvailable", "getAuth", "login", "logout"];
const MUTATORS = ["setProvider", "deleteProvider", "clearProviders"];

/** A view of a `Models` collection whose requests carry `identity` under their own identity's fields. */
export function withClientIdentity(models: Record<string, unknown>, identity: ClientIdentity): Record<string, unknown> {
  const call = (name: string) => (models[name] as Fn).bind(models);
  const out: Record<string, unknown> = {};
  for (const name of PASSED) out[name] = call(name);
  for (const name of REQUESTS) {
    out[name] = (model: unknown, arg: unknown, options?: { identity?: ClientIdentity }) => call(name)(model, arg, { ...options, identity: mergeClientIdentity(identity, options?.identity) });
  }
  if (MUTATORS.every((m) => m in models)) for (const name of MUTATORS) out[name] = call(name);
  return out;
}
