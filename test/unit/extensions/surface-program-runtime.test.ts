import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { describeRuntime } from "../../../src/extensions/surface/program-runtime.ts";

/**
 * What `runRpcMode(runtime)` in `pion run` carries from an in-process runtime to pion's RPC mode
 * (program-runtime.ts): folder, session file (written now), model, thinking level, the tools the
 * session was made with, and what its DefaultResourceLoader loads.
 */
type Rec = Record<string, any>;
const ca = referenceModules()["pi-coding-agent"] as Rec;
const fake = startFakeProvider();
afterAll(() => fake.stop());

function agentDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pion-prt-agent-"));
  const models = [{ id: "fake-model", name: "Fake", reasoning: true, input: ["text"], contextWindow: 100000, maxTokens: 1000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }];
  writeFileSync(join(dir, "models.json"), JSON.stringify({ providers: { fake: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "k", models } } }));
  return dir;
}

async function runtimeWith(cwd: string, dir: string, sessionManager: unknown, loader: Rec, session: Rec) {
  const factory = async ({ cwd, agentDir, sessionManager, sessionStartEvent }: Rec) => {
    const services = await ca.createAgentSessionServices({ cwd, agentDir, settingsManager: ca.SettingsManager.inMemory({}), resourceLoaderOptions: loader });
    const model = services.modelRuntime.getModel("fake", "fake-model");
    return { ...(await ca.createAgentSessionFromServices({ services, sessionManager, sessionStartEvent, model, ...session })), services, diagnostics: services.diagnostics };
  };
  return ca.createAgentSessionRuntime(factory, { cwd, agentDir: dir, sessionManager });
}

describe("describeRuntime", () => {
  test("a file-backed session: its file is written now (header, model and thinking level) for pion to continue; the loader's and session's options carry over", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "pion-prt-cwd-"));
    const dir = agentDir();
    const factory = () => {};
    const tool = { name: "stamp", label: "Stamp", description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [], details: {} }) };
    const manager = ca.SessionManager.create(cwd, join(dir, "sessions"));
    const runtime = await runtimeWith(
      cwd,
      dir,
      manager,
      { noExtensions: true, additionalExtensionPaths: ["/x/ext.ts"], extensionFactories: [factory, { name: "named", factory }], noSkills: true, additionalSkillPaths: ["/x/skill"], noContextFiles: true, systemPrompt: "Be brief." },
      { tools: ["read", "stamp"], customTools: [tool], thinkingLevel: "high" },
    );
    expect(manager.getSessionFile()).toBeDefined();
    expect(existsSync(manager.getSessionFile())).toBe(false);
    const d = describeRuntime(runtime);
    expect(d).toMatchObject({
      cwd,
      sessionFile: manager.getSessionFile(),
      model: { provider: "fake", id: "fake-model" },
      thinkingLevel: "high",
      tools: ["read", "stamp"],
      extensionPaths: ["/x/ext.ts"],
      noExtensions: true,
      skills: ["/x/skill"],
      noSkills: true,
      noContextFiles: true,
      systemPrompt: "Be brief.",
      warnings: [],
    });
    expect(d.inlineExtensions.map((e) => e.path)).toEqual(["<inline:1>", "<inline:named>", "<inline:customTools>"]);
    const registered: unknown[] = [];
    d.inlineExtensions[2]!.factory({ registerTool: (t: unknown) => registered.push(t) } as never);
    expect(registered).toEqual([tool]);
    const written = readFileSync(d.sessionFile!, "utf8").trim().split("\n").map((l) => JSON.parse(l).type);
    expect(written).toEqual(["session", "model_change", "thinking_level_change"]);
    await runtime.dispose();
  });

  test("a session in memory has no file; no tools option leaves pion's default loadout; a loader pion did not make is a warning", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "pion-prt-cwd-"));
    const runtime = await runtimeWith(cwd, agentDir(), ca.SessionManager.inMemory(cwd), { noExtensions: true }, {});
    const d = describeRuntime(runtime);
    expect(d.sessionFile).toBeUndefined();
    expect(d.tools).toBeUndefined();
    expect(d.inlineExtensions).toEqual([]);
    expect(d.warnings).toEqual([]);
    const other = { getSystemPrompt: () => "Custom.", getAppendSystemPrompt: () => ["More."], getExtensions: () => ({ extensions: [], errors: [], runtime: { flagValues: new Map() } }) };
    const made = describeRuntime({ cwd, session: { ...runtime.session, model: undefined, thinkingLevel: "off", sessionManager: {}, resourceLoader: other }, services: runtime.services } as never);
    expect(made).toMatchObject({ systemPrompt: "Custom.", appendSystemPrompt: ["More."], extensionPaths: [] });
    expect(made.warnings).toEqual([expect.stringContaining("not a DefaultResourceLoader")]);
    await runtime.dispose();
  });
});
