import { loadSettings, loadUserSettings } from "../config.ts";
import { chooseModel } from "../providers/model-choice.ts";
import { loadModels } from "../providers/models.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { errorMessage } from "../util/errors.ts";

const USAGE = "usage: pion auth check [--model M] [--provider P] [--api-key K] [--json]";

/**
 * `pion auth check`: a CI preflight. Picks the model a run with the same flags would start on
 * and says where its credential comes from (never the credential). Exit 0 when there is one;
 * 1 naming what was looked for when there is none (or a stored login cannot be refreshed);
 * 2 for a usage error.
 */
export async function runAuthCli(
  argv: string[],
  o: { home: string; cwd: string; env: Record<string, string | undefined>; out: (s: string) => void; err: (s: string) => void },
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "check") {
    o.err(`pion: ${USAGE}\n`);
    return 2;
  }
  const flags: { model?: string; provider?: string; apiKey?: string; json?: boolean } = {};
  for (let i = 0; i < rest.length; i++) {
    const tok = rest[i]!;
    if (tok === "--json") {
      flags.json = true;
      continue;
    }
    const name = { "--model": "model", "--provider": "provider", "--api-key": "apiKey" }[tok] as "model" | "provider" | "apiKey" | undefined;
    const val = rest[i + 1];
    if (!name || val === undefined) {
      o.err(`pion: ${name ? `Option ${tok} needs a value` : `Unknown option for pion auth check: ${tok}`} (${USAGE})\n`);
      return 2;
    }
    flags[name] = val;
    i++;
  }
  const fail = (message: string, data: Record<string, unknown> = {}) => {
    if (flags.json) o.out(`${JSON.stringify({ ok: false, error: message, ...data })}\n`);
    o.err(`pion: ${message}\n`);
    return 1;
  };
  try {
    const user = loadUserSettings(o.home);
    const trust = decideProjectTrust({ home: o.home, cwd: o.cwd, defaultProjectTrust: user.defaultProjectTrust });
    const settings = loadSettings(o.home, o.cwd, trust.trusted, () => {}, user);
    const registry = loadModels(o.home, o.env, { provider: flags.provider, apiKey: flags.apiKey });
    const pattern = flags.model ?? (flags.provider ? undefined : settings.defaultModel);
    const provider = flags.provider ?? (flags.model ? undefined : settings.defaultProvider);
    const { model } = chooseModel(registry, { pattern, provider });
    if (!model) return fail("No provider has a credential: set a provider's API key variable (e.g. ANTHROPIC_API_KEY), add it to auth.json or models.json, or pass --api-key.");
    const name = `${model.provider}/${model.id}`;
    const origin = registry.keyOrigin(model.provider);
    if (registry.apiKey(model.provider) === undefined || origin === undefined) {
      const sources = registry.keySources(model.provider);
      return fail(`No credential for ${name}: looked in ${sources.join(", ")}.`, { provider: model.provider, model: model.id, looked: sources });
    }
    // An expired stored login is refreshed now, so the run does not fail on its first request.
    await registry.requestAuth(model.provider);
    if (flags.json) o.out(`${JSON.stringify({ ok: true, provider: model.provider, model: model.id, credential: origin })}\n`);
    else o.out(`${name}: credential from ${origin}\n`);
    return 0;
  } catch (err) {
    return fail(errorMessage(err));
  }
}
