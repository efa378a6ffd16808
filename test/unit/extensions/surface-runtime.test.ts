import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { setModelAuth } from "../../../src/extensions/model-calls.ts";
import { agentRuntimeExports } from "../../../src/extensions/surface/agent-runtime.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

type Rec = Record<string, any>;
const REF = process.env.PION_REFERENCE_PKG;
const ca = { ...(referenceModules()["pi-coding-agent"] as Rec), ...agentRuntimeExports } as Rec;

const fake = startFakeProvider();
afterAll(() => fake.stop());

/** A folder with a models.json naming the fake provider (key "file-key") and its one model. */
function agentDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pion-rt-agent-"));
  const models = [{ id: "fake-model", name: "Fake", reasoning: false, input: ["text"], contextWindow: 100000, maxTokens: 1000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }];
  writeFileSync(join(dir, "models.json"), JSON.stringify({ providers: { fake: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "file-key", models } } }));
  return dir;
}
const workDir = () => mkdtempSync(join(tmpdir(), "pion-rt-cwd-"));

/** An agent folder with one skill and one prompt template, and an empty working folder. */
function resourceFolders(): { dir: string; cwd: string } {
  const dir = agentDir();
  mkdirSync(join(dir, "skills", "greet"), { recursive: true });
  writeFileSync(join(dir, "skills", "greet", "SKILL.md"), "---\nname: greet\ndescription: Say hello\n---\nSay hello.\n");
  mkdirSync(join(dir, "prompts"), { recursive: true });
  writeFileSync(join(dir, "prompts", "review.md"), "---\ndescription: Review code\n---\nReview $1\n");
  return { dir, cwd: workDir() };
}

/** The factory of the reference's session runtime example: services for the folder, then the session on them. */
const factory = async ({ cwd, agentDir, sessionManager, sessionStartEvent }: Rec) => {
  const services = await ca.createAgentSessionServices({ cwd, agentDir });
  return { ...(await ca.createAgentSessionFromServices({ services, sessionManager, sessionStartEvent, tools: [] })), services, diagnostics: services.diagnostics };
};

describe("ModelRuntime over pion's models", () => {
  test("models, auth and its status come from the files it was made with; a runtime key wins and can be removed", async () => {
    const dir = agentDir();
    const runtime = await ca.ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: join(dir, "models.json") });
    expect(runtime.getModel("fake", "fake-model")).toMatchObject({ id: "fake-model", provider: "fake", api: "anthropic-messages", baseUrl: fake.url });
    expect(runtime.getModels("fake").map((m: Rec) => m.id)).toEqual(["fake-model"]);
    expect(runtime.getModelsOfType("image")).toEqual([]);
    expect(runtime.hasConfiguredAuth("fake")).toBe(true);
    expect(runtime.hasConfiguredAuth("anthropic")).toBe(false);
    expect((await runtime.getAvailable()).map((m: Rec) => `${m.provider}/${m.id}`)).toEqual(["fake/fake-model"]);
    expect(await runtime.getAuth("fake")).toEqual({ auth: { apiKey: "file-key" }, source: "configured API key" });
    expect(await runtime.getAuth("anthropic")).toBeUndefined();
    expect([await runtime.checkAuth("fake"), await runtime.checkAuth("anthropic")]).toEqual([{ type: "api_key", source: "configured API key" }, undefined]);
    const provider = runtime.getProvider("fake");
    expect([provider.id, provider.baseUrl, provider.getModels().map((m: Rec) => m.id)]).toEqual(["fake", fake.url, ["fake-model"]]);
    expect(await provider.auth.apiKey.resolve()).toEqual({ auth: { apiKey: "file-key" }, source: "configured API key" });
    expect(runtime.getProviderAuthStatus("fake")).toMatchObject({ configured: true, source: "models_json_key" });
    await runtime.setRuntimeApiKey("fake", "runtime-key");
    expect([await runtime.getAuth({ provider: "fake" }), runtime.getProviderAuthStatus("fake")]).toEqual([{ auth: { apiKey: "runtime-key" }, source: "stored credential" }, { configured: true, source: "runtime" }]);
    await runtime.removeRuntimeApiKey("fake");
    expect((await runtime.getAuth("fake")).auth).toEqual({ apiKey: "file-key" });
    expect(() => runtime.registerProvider("x", {})).toThrow("ModelRuntime.registerProvider is not available in pion");
    await expect(runtime.login("x")).rejects.toThrow("ModelRuntime.login");
  });

  (REF ? test : test.skip)("the same models, auth, auth checks and status as the reference's runtime over the same files", async () => {
    const ref = (await import(`${REF}/dist/index.js`)) as Rec;
    const dir = agentDir();
    writeFileSync(join(dir, "auth.json"), JSON.stringify({ stored: { type: "api_key", key: "stored-key" } }));
    const models = JSON.parse(require("node:fs").readFileSync(join(dir, "models.json"), "utf8"));
    models.providers.stored = { ...models.providers.fake, apiKey: undefined };
    models.providers.cmd = { ...models.providers.fake, apiKey: "!echo from-command" };
    writeFileSync(join(dir, "models.json"), JSON.stringify(models));
    const view = async (R: Rec) => {
      const rt = await R.create({ authPath: join(dir, "auth.json"), modelsPath: join(dir, "models.json") });
      const out: Rec = {};
      for (const p of ["fake", "stored", "cmd", "anthropic", "nobody-here"]) {
        const m = rt.getModel(p, "fake-model");
        out[p] = {
          model: m && [m.id, m.name, m.api, m.provider, m.baseUrl, m.reasoning, m.input, m.contextWindow, m.maxTokens, m.cost],
          has: rt.hasConfiguredAuth(p),
          auth: await rt.getAuth(p),
          check: await rt.checkAuth(p),
          status: rt.getProviderAuthStatus(p),
          oauth: rt.isUsingOAuth(p),
        };
      }
      await rt.setRuntimeApiKey("fake", "rk");
      out.runtimeKey = [await rt.getAuth("fake"), await rt.checkAuth("fake"), rt.getProviderAuthStatus("fake")];
      out.available = (await rt.getAvailable()).map((m: Rec) => `${m.provider}/${m.id}`).filter((id: string) => id.endsWith("fake-model"));
      out.registered = rt.getRegisteredProviderIds();
      return out;
    };
    process.env.ANTHROPIC_API_KEY = "env-key";
    try {
      expect(await view(ca.ModelRuntime)).toEqual(await view(ref.ModelRuntime));
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
  });

  test("a call through the runtime is sent with its key; new ModelRegistry(runtime) answers from the runtime", async () => {
    setModelAuth(async () => ({ apiKey: "session-key" }));
    const dir = agentDir();
    const runtime = await ca.ModelRuntime.create({ authPath: join(dir, "auth.json"), modelsPath: join(dir, "models.json") });
    await runtime.setRuntimeApiKey("fake", "runtime-key");
    const model = runtime.getModel("fake", "fake-model");
    fake.enqueue({ blocks: [{ type: "text", text: "hello" }] }, { blocks: [{ type: "text", text: "again" }] });
    const before = fake.requests.length;
    const reply = await runtime.complete(model, { messages: [{ role: "user", content: "hi", timestamp: 1 }] });
    expect(reply.content).toEqual([{ type: "text", text: "hello" }]);
    expect(fake.requests[before]!.headers["x-api-key"]).toBe("runtime-key");

    const registry = new ca.ModelRegistry(runtime);
    expect(registry.find("fake", "fake-model")?.baseUrl).toBe(fake.url);
    expect(registry.getAvailable().map((m: Rec) => m.id)).toEqual(["fake-model"]);
    expect(await registry.getApiKeyAndHeaders(model)).toEqual({ ok: true, apiKey: "runtime-key" });
    expect(registry.getProviderAuthStatus("fake")).toEqual({ configured: true, source: "runtime" });
    await registry.complete(model, { messages: [{ role: "user", content: "hi", timestamp: 1 }] });
    expect(fake.requests[before + 1]!.headers["x-api-key"]).toBe("runtime-key");
    expect(() => new ca.ModelRegistry({ getModels: () => [] })).toThrow("ModelRegistry takes a ModelRuntime");
  });
});

describe("DefaultResourceLoader on pion's resource loaders", () => {
  test("skills, prompt templates, context files and the system prompt files of the folder, after reload", async () => {
    const { dir, cwd } = resourceFolders();
    writeFileSync(join(dir, "APPEND_SYSTEM.md"), "Appended.");
    writeFileSync(join(cwd, "AGENTS.md"), "Project rules.");
    const loader = new ca.DefaultResourceLoader({ cwd, agentDir: dir, systemPrompt: "Custom base." });
    expect(loader.getSkills()).toEqual({ skills: [], diagnostics: [] });
    await loader.reload();
    expect(loader.getSkills().skills.map((s: Rec) => [s.name, s.description])).toEqual([["greet", "Say hello"]]);
    expect(loader.getPrompts().prompts.map((p: Rec) => [p.name, p.description, p.content])).toEqual([["review", "Review code", "Review $1"]]);
    expect(loader.getAgentsFiles().agentsFiles.filter((f: Rec) => f.path.startsWith(cwd))).toEqual([{ path: join(cwd, "AGENTS.md"), content: "Project rules." }]);
    expect([loader.getSystemPrompt(), loader.getSystemPromptSource(), loader.getAppendSystemPrompt(), loader.getAppendSystemPromptSources()]).toEqual(["Custom base.", undefined, ["Appended."], [{ path: join(dir, "APPEND_SYSTEM.md") }]]);
    expect(loader.getExtensions().extensions).toEqual([]);
    const more = join(cwd, "more");
    mkdirSync(join(more, "wave"), { recursive: true });
    writeFileSync(join(more, "wave", "SKILL.md"), "---\nname: wave\ndescription: Wave\n---\nWave.\n");
    loader.extendResources({ skillPaths: [{ path: more, metadata: {} }] });
    expect(loader.getSkills().skills.map((s: Rec) => s.name)).toEqual(["greet", "wave"]);
    await loader.reload();
    expect(loader.getSkills().skills.map((s: Rec) => s.name)).toEqual(["greet"]);
    const trimmed = new ca.DefaultResourceLoader({ cwd, agentDir: dir, noSkills: true, noContextFiles: true, promptsOverride: (b: Rec) => ({ ...b, prompts: [] }) });
    await trimmed.reload();
    expect([trimmed.getSkills().skills, trimmed.getPrompts().prompts, trimmed.getAgentsFiles().agentsFiles]).toEqual([[], [], []]);
    const inline = new ca.DefaultResourceLoader({ cwd, agentDir: dir, noExtensions: true, extensionFactories: [(pi: Rec) => pi.on("agent_start", () => {}), { name: "named", factory: () => {} }] });
    await inline.reload();
    expect(inline.getExtensions().extensions.map((e: Rec) => [e.path, e.sourceInfo.source])).toEqual([["<inline:1>", "inline"], ["<inline:named>", "inline"]]);
  });

  (REF ? test : test.skip)("the same skills, prompts, system prompts and context files as the reference's loader for the same folders", async () => {
    const ref = (await import(`${REF}/dist/index.js`)) as Rec;
    const { dir, cwd } = resourceFolders();
    writeFileSync(join(dir, "SYSTEM.md"), "Base from file.");
    writeFileSync(join(cwd, "AGENTS.md"), "Project rules.");
    const view = async (Loader: any, settingsManager: unknown) => {
      const l = new Loader({ cwd, agentDir: dir, settingsManager, noExtensions: true, appendSystemPrompt: ["More."] });
      await l.reload();
      return {
        skills: l.getSkills().skills.map((s: Rec) => [s.name, s.description, s.filePath, s.disableModelInvocation]),
        prompts: l.getPrompts().prompts.map((p: Rec) => [p.name, p.description, p.content, p.filePath]),
        system: [l.getSystemPrompt(), l.getSystemPromptSource(), l.getAppendSystemPrompt()],
        files: l.getAgentsFiles().agentsFiles.filter((f: Rec) => f.path.startsWith(cwd) || f.path.startsWith(dir)),
      };
    };
    const mine = await view(ca.DefaultResourceLoader, ca.SettingsManager.inMemory({}));
    const theirs = await view(ref.DefaultResourceLoader, ref.SettingsManager.inMemory({}));
    expect(mine).toEqual(theirs);
  });
});

describe("session services", () => {
  test("createAgentSessionServices gathers the folder's services; the session from them prompts with the runtime's key and model", async () => {
    setModelAuth(async () => ({ apiKey: "session-key" }));
    const dir = agentDir();
    const cwd = workDir();
    const services = await ca.createAgentSessionServices({ cwd, agentDir: dir, extensionFlagValues: new Map([["verbose", true]]) });
    expect([services.cwd, services.agentDir]).toEqual([cwd, dir]);
    expect(services.modelRuntime).toBeInstanceOf(ca.ModelRuntime);
    expect(services.settingsManager).toBeInstanceOf(ca.SettingsManager);
    expect(services.resourceLoader).toBeInstanceOf(ca.DefaultResourceLoader);
    expect(services.diagnostics).toEqual([{ type: "error", message: "Unknown option: --verbose" }]);

    const result = await ca.createAgentSessionFromServices({ services, sessionManager: ca.SessionManager.inMemory(cwd), tools: ["read"] });
    const { session } = result;
    expect(result.modelFallbackMessage).toBeUndefined();
    expect([session.model.provider, session.model.id, session.getActiveToolNames()]).toEqual(["fake", "fake-model", ["read"]]);
    expect(session.modelRegistry).toBeInstanceOf(ca.ModelRegistry);
    fake.enqueue({ blocks: [{ type: "text", text: "from services" }] });
    const before = fake.requests.length;
    await session.prompt("hi");
    expect(session.getLastAssistantText()).toBe("from services");
    expect(fake.requests[before]!.headers["x-api-key"]).toBe("file-key");
    session.dispose();
  });

  (REF ? test : test.skip)("diagnostics for extension flags as the reference reports them", async () => {
    const ref = (await import(`${REF}/dist/index.js`)) as Rec;
    const dir = agentDir();
    const cwd = workDir();
    const flags = new Map<string, boolean | string>([["one", true], ["two", "x"]]);
    const options = (mod: Rec) => ({ cwd, agentDir: dir, settingsManager: mod.SettingsManager.inMemory({}), extensionFlagValues: flags, resourceLoaderOptions: { noExtensions: true } });
    const theirs = await ref.createAgentSessionServices(options(ref));
    const mine = await ca.createAgentSessionServices(options(ca));
    expect(mine.diagnostics).toEqual(theirs.diagnostics);
  });
});

describe("AgentSessionRuntime", () => {
  test("newSession and fork replace the in-memory session; the factory gets each reason", async () => {
    const dir = agentDir();
    const cwd = workDir();
    const reasons: string[] = [];
    const counting = async (o: Rec) => {
      reasons.push(o.sessionStartEvent?.reason ?? "startup");
      return factory(o);
    };
    const runtime = await ca.createAgentSessionRuntime(counting, { cwd, agentDir: dir, sessionManager: ca.SessionManager.inMemory(cwd) });
    expect(runtime).toBeInstanceOf(ca.AgentSessionRuntime);
    const rebound: unknown[] = [];
    runtime.setRebindSession(async (s: unknown) => void rebound.push(s));
    const first = runtime.session;
    fake.enqueue({ blocks: [{ type: "text", text: "one" }] }, { blocks: [{ type: "text", text: "two" }] });
    await first.prompt("first question");
    await first.prompt("second question");
    const firstId = first.sessionId;
    const entries = first.sessionManager.getEntries() as Rec[];
    const secondUser = entries.filter((e) => e.type === "message" && e.message.role === "user")[1]!;

    const forked = await runtime.fork(secondUser.id);
    expect(forked).toEqual({ cancelled: false, selectedText: "second question" });
    expect(runtime.session).not.toBe(first);
    expect(runtime.session.sessionId).not.toBe(firstId);
    expect(runtime.session.messages.map((m: Rec) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(runtime.session.sessionManager.getBranch().at(-1).message.content).toEqual([{ type: "text", text: "one" }]);

    const afterFork = runtime.session;
    expect(await runtime.newSession({ setup: async (sm: Rec) => void sm.appendMessage({ role: "user", content: "seeded", timestamp: 1 }) })).toEqual({ cancelled: false });
    expect(runtime.session).not.toBe(afterFork);
    expect(runtime.session.sessionManager.getHeader().parentSession).toBeUndefined();
    expect(runtime.session.messages.filter((m: Rec) => m.role !== "system").map((m: Rec) => m.content)).toEqual(["seeded"]);
    expect(reasons).toEqual(["startup", "fork", "new"]);
    expect(rebound).toEqual([afterFork, runtime.session]);
    expect(() => runtime.fork("nope")).toThrow("Invalid entry ID for forking");
    await expect(runtime.importFromJsonl("/nonexistent/x.jsonl")).rejects.toThrow("Session file not found: /nonexistent/x.jsonl");
    await runtime.dispose();
  });

  test("fork at an entry keeps the branch up to it; a fork before the first message keeps what came before it", async () => {
    const dir = agentDir();
    const cwd = workDir();
    const runtime = await ca.createAgentSessionRuntime(factory, { cwd, agentDir: dir, sessionManager: ca.SessionManager.inMemory(cwd) });
    fake.enqueue({ blocks: [{ type: "text", text: "reply" }] });
    await runtime.session.prompt("only question");
    const sm = runtime.session.sessionManager;
    const [userEntry, assistantEntry] = (sm.getEntries() as Rec[]).filter((e) => e.type === "message");
    sm.appendLabelChange(userEntry!.id, "start");
    expect(await runtime.fork(assistantEntry!.id, { position: "at" })).toEqual({ cancelled: false });
    const kept = runtime.session.sessionManager.getEntries() as Rec[];
    expect(kept.map((e) => e.type)).toEqual(["model_change", "thinking_level_change", "message", "message", "label"]);
    expect(kept.at(-1)).toMatchObject({ targetId: userEntry!.id, label: "start", parentId: assistantEntry!.id });
    expect(runtime.session.sessionManager.getLabel(userEntry!.id)).toBe("start");

    const parentId = runtime.session.sessionId;
    const again = (runtime.session.sessionManager.getEntries() as Rec[]).find((e) => e.type === "message")!;
    expect(await runtime.fork(again.id)).toEqual({ cancelled: false, selectedText: "only question" });
    expect(runtime.session.messages.map((m: Rec) => m.role)).toEqual(["system"]);
    expect(runtime.session.sessionId).not.toBe(parentId);
    await runtime.dispose();
  });

  test("switchSession continues a session file; a new session, a fork and an import of a file-backed one are files beside it", async () => {
    const dir = agentDir();
    const cwd = workDir();
    const file = join(cwd, "s.jsonl");
    const lines = [
      { type: "session", version: 3, id: "file-session", timestamp: "2026-01-01T00:00:00.000Z", cwd },
      { type: "model_change", id: "a1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z", provider: "fake", modelId: "fake-model" },
      { type: "message", id: "a2", parentId: "a1", timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "from file", timestamp: 1 } },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const runtime = await ca.createAgentSessionRuntime(factory, { cwd, agentDir: dir, sessionManager: ca.SessionManager.inMemory(cwd) });
    expect(await runtime.switchSession(file)).toEqual({ cancelled: false });
    expect([runtime.session.sessionId, runtime.session.sessionFile, runtime.session.model.id]).toEqual(["file-session", file, "fake-model"]);
    expect(runtime.session.messages.filter((m: Rec) => m.role !== "system").map((m: Rec) => m.content)).toEqual(["from file"]);
    fake.enqueue({ blocks: [{ type: "text", text: "appended" }] });
    await runtime.session.prompt("more");
    const written = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(written.slice(0, 3)).toEqual(lines);
    expect(written.slice(3).filter((e: Rec) => e.type === "message").map((e: Rec) => e.message.role)).toEqual(expect.arrayContaining(["user", "assistant"]));
    await runtime.newSession();
    const fresh = runtime.session.sessionFile as string;
    expect([dirname(fresh), existsSync(fresh), runtime.session.sessionId === "file-session"]).toEqual([cwd, false, false]);
    await runtime.switchSession(file);
    expect(await runtime.fork("a2")).toEqual({ cancelled: false, selectedText: "from file" });
    const forked = runtime.session.sessionFile as string;
    expect([dirname(forked), forked === file, runtime.session.sessionManager.getHeader().parentSession]).toEqual([cwd, false, file]);
    const elsewhere = join(workDir(), "s.jsonl");
    writeFileSync(elsewhere, readFileSync(file));
    await runtime.importFromJsonl(elsewhere);
    expect([runtime.session.sessionFile, runtime.session.sessionId]).toEqual([join(cwd, "s-1.jsonl"), "file-session"]);
    await expect(runtime.switchSession(file, { withSession: async () => {} })).rejects.toThrow("withSession is not available in pion");
    await runtime.dispose();
  });

  test("newSession with a parent session records it in the new header", async () => {
    const cwd = workDir();
    const runtime = await ca.createAgentSessionRuntime(factory, { cwd, agentDir: agentDir(), sessionManager: ca.SessionManager.inMemory(cwd) });
    const before = runtime.session.sessionId;
    await runtime.newSession({ parentSession: "/sessions/p.jsonl" });
    expect(runtime.session.sessionManager.getHeader()).toMatchObject({ type: "session", version: 3, cwd, parentSession: "/sessions/p.jsonl" });
    expect(runtime.session.sessionId).not.toBe(before);
    await runtime.dispose();
  });

  (REF ? test : test.skip)("an in-memory SessionManager's createBranchedSession and newSession leave the entries the reference's leaves", async () => {
    const ref = (await import(`${REF}/dist/index.js`)) as Rec;
    const run = (SM: Rec) => {
      const sm = SM.inMemory("/w");
      const u1 = sm.appendMessage({ role: "user", content: "a", timestamp: 1 });
      sm.appendLabelChange(u1, "first");
      const a1 = sm.appendMessage({ role: "assistant", content: [{ type: "text", text: "b" }], timestamp: 2 });
      sm.appendLabelChange(a1, "answer");
      sm.appendLabelChange(a1, undefined);
      sm.appendModelChange("p", "m");
      const u2 = sm.appendMessage({ role: "user", content: "c", timestamp: 3 });
      const oldId = sm.getSessionId();
      const returned = sm.createBranchedSession(u2);
      const entries = sm.getEntries() as Rec[];
      const index = new Map(entries.map((e, i) => [e.id, i]));
      const shape = entries.map(({ id: _id, timestamp: _t, parentId, targetId, ...rest }) => ({ ...rest, parent: parentId === null ? null : index.get(parentId), ...(targetId ? { target: index.get(targetId) } : {}) }));
      const header = sm.getHeader();
      const branched = { returned, shape, newId: sm.getSessionId() !== oldId, leaf: index.get(sm.getLeafId()), header: [header.type, header.version, header.cwd, header.parentSession] };
      sm.newSession({ parentSession: "/p.jsonl" });
      return { branched, fresh: [sm.getEntries(), sm.getLeafId(), sm.getHeader().parentSession] };
    };
    expect(run(ca.SessionManager)).toEqual(run(ref.SessionManager));
  });

  test("takeUnreportedDiagnostics returns each diagnostic once; a missing session folder is refused", async () => {
    const dir = agentDir();
    const cwd = workDir();
    const noisy = async (o: Rec) => ({ ...(await factory(o)), diagnostics: [{ type: "warning", message: "w" }, { type: "warning", message: "w" }] });
    const runtime = await ca.createAgentSessionRuntime(noisy, { cwd, agentDir: dir, sessionManager: ca.SessionManager.inMemory(cwd) });
    expect(runtime.takeUnreportedDiagnostics()).toEqual([{ type: "warning", message: "w" }]);
    expect(runtime.takeUnreportedDiagnostics()).toEqual([]);
    await runtime.dispose();
    const file = join(cwd, "gone.jsonl");
    writeFileSync(file, JSON.stringify({ type: "session", version: 3, id: "g", timestamp: "2026-01-01T00:00:00.000Z", cwd: join(cwd, "missing") }) + "\n");
    await expect(ca.createAgentSessionRuntime(factory, { cwd, agentDir: dir, sessionManager: ca.SessionManager.open(file) })).rejects.toThrow("Stored session working directory does not exist");
  });
});
