/**
 * pi-ai's provider layer for extensions, on pion's providers: `Models` collections and provider
 * objects, client identity, auth building blocks, the request telemetry's schema and the faux
 * test provider in every pi-ai module; the API registry, the per-API stream functions, image
 * generation and the static catalog reads only in pi-ai/compat, as the reference splits them.
 */
import { InMemoryCredentialStore, InMemoryModelsStore, ModelsError, defaultProviderAuthContext, envApiKeyAuth, lazyOAuth } from "./ai-providers-auth.ts";
import * as catalog from "./ai-providers-catalog.ts";
import * as faux from "./ai-providers-faux.ts";
import * as identity from "./ai-providers-identity.ts";
import { createProvider, fauxProvider } from "./ai-providers-provider.ts";
import * as images from "./ai-providers-images.ts";
import { createModels } from "./ai-providers-models.ts";
import * as registry from "./ai-providers-registry.ts";
import { apiStreamExports, lazyApi, lazyStream } from "./ai-providers-streams.ts";
import { AI_TELEMETRY_SCHEMA } from "./ai-telemetry.ts";

export const aiProviderExports: Record<string, unknown> = {
  InMemoryCredentialStore,
  InMemoryModelsStore,
  ModelsError,
  defaultProviderAuthContext,
  envApiKeyAuth,
  lazyOAuth,
  ...identity,
  lazyApi,
  lazyStream,
  createModels,
  AI_TELEMETRY_SCHEMA,
  createProvider,
  fauxProvider,
  createFauxCore: faux.createFauxCore,
  fauxAssistantMessage: faux.fauxAssistantMessage,
  fauxText: faux.fauxText,
  fauxThinking: faux.fauxThinking,
  fauxToolCall: faux.fauxToolCall,
};

/** pi-ai/compat names beyond pi-ai. */
export const aiCompatExports: Record<string, unknown> = {
  ...catalog,
  ...registry,
  ...images,
  ...apiStreamExports(),
};
