/**
 * Runs the reference's `resolveCliModel` and `resolveModelScopeWithDiagnostics` in a process of
 * their own (so its pi-ai is the reference's, not pion's virtual module) over one model runtime,
 * and answers what each case returned, reduced to the user-visible part, plus the runtime's models
 * and which providers it counts as authenticated, so pion can be run on exactly those models.
 *
 * The runtime is either the reference's own `ModelRuntime` over an agent folder (`agentDir`: its
 * models.json and auth.json, keys from `env`), or a runtime over given models (`models` and the
 * `usable` providers), for running the reference on pion's catalog.
 */
import { join } from "node:path";
import type { Model } from "../../src/providers/types.ts";

export type ResolveCase =
  | { kind: "cli"; provider?: string; model?: string; thinking?: string; inlineApiKey?: boolean }
  | { kind: "scope"; patterns: string[] };

export interface ResolveInput {
  agentDir?: string;
  env?: Record<string, string>;
  models?: Model[];
  usable?: string[];
  cases: ResolveCase[];
}

export interface ResolveOutput {
  models: Model[];
  usable: string[];
  results: unknown[];
}

/** The part of a model choice both agents must agree on. */
export const modelKey = (m: { provider: string; id: string } | undefined) => (m ? `${m.provider}/${m.id}` : undefined);

/** A custom id's other fields come from a model each agent picks from its own catalog, so only a listed model's `reasoning` is compared. */
export function reduceCli(r: { model?: { provider: string; id: string; reasoning?: boolean }; thinkingLevel?: string; warning?: string; error?: string }) {
  const custom = r.warning?.endsWith("Using custom model id.");
  return { model: modelKey(r.model), reasoning: custom ? undefined : r.model?.reasoning, thinkingLevel: r.thinkingLevel, warning: r.warning, error: r.error };
}

export function reduceScope(r: { scopedModels: { model: { provider: string; id: string }; thinkingLevel?: string }[]; diagnostics: unknown[] }) {
  return { scoped: r.scopedModels.map((s) => [modelKey(s.model), s.thinkingLevel ?? null]), diagnostics: r.diagnostics };
}

export async function referenceResolve(referenceDir: string, input: ResolveInput): Promise<ResolveOutput> {
  const child = Bun.spawn(["bun", import.meta.path, referenceDir], { stdin: new Blob([JSON.stringify(input)]), stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...input.env } });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`reference model resolution failed: ${err}`);
  return JSON.parse(out) as ResolveOutput;
}

type Runtime = { getModels(): readonly Model[]; hasConfiguredAuth(p: string): boolean; getAvailable(): Promise<readonly Model[]> };

if (import.meta.main) {
  const ref = (await import(join(process.argv[2]!, "dist/index.js"))) as Record<string, any>;
  const input = JSON.parse(await Bun.stdin.text()) as ResolveInput;
  let runtime: Runtime;
  if (input.agentDir) {
    runtime = await ref.ModelRuntime.create({
      authPath: join(input.agentDir, "auth.json"),
      modelsPath: join(input.agentDir, "models.json"),
      modelsStorePath: join(input.agentDir, "models-store.json"),
      allowModelNetwork: false,
      refreshOnCreate: false,
    });
  } else {
    const models = input.models ?? [];
    const usable = new Set(input.usable ?? []);
    runtime = { getModels: () => models, hasConfiguredAuth: (p) => usable.has(p), getAvailable: async () => models.filter((m) => usable.has(m.provider)) };
  }
  // Credentials are checked in the background; the reference's start-up waits for them (its scope) before --model.
  await runtime.getAvailable();
  const results: unknown[] = [];
  for (const c of input.cases) {
    if (c.kind === "cli") results.push(reduceCli(ref.resolveCliModel({ cliProvider: c.provider, cliModel: c.model, cliThinking: c.thinking, inlineApiKey: c.inlineApiKey, modelRuntime: runtime })));
    else results.push(reduceScope(await ref.resolveModelScopeWithDiagnostics(c.patterns, runtime)));
  }
  const models = [...runtime.getModels()];
  const usable = [...new Set(models.map((m) => m.provider))].filter((p) => runtime.hasConfiguredAuth(p));
  process.stdout.write(JSON.stringify({ models: input.models ? [] : models, usable, results }));
}
