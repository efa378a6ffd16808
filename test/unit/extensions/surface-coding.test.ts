import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

const REF = process.env.PION_REFERENCE_PKG;
type Fn = (...args: any[]) => any;
const pion = referenceModules()["pi-coding-agent"] as Record<string, any>;
const ref = async (path: string): Promise<Record<string, any>> => import(join(REF!, "dist", path));
const tmp = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));
const refTest = REF ? test : test.skip;

/** Every public getter of the reference's SettingsManager, with what pion's answers beside it. */
async function compareGetters(settings: Record<string, unknown>): Promise<[string, unknown, unknown][]> {
  const { SettingsManager: R } = await ref("core/settings-manager.js");
  const r = R.inMemory(structuredClone(settings));
  const p = pion.SettingsManager.inMemory(structuredClone(settings));
  const model = { provider: "a", id: "b" };
  return Object.getOwnPropertyNames(R.prototype)
    .filter((n) => n.startsWith("get") && n !== "getOrCreateDeviceId" && n !== "getCompactionTokenSetting")
    .map((n) => [n, r[n](model), typeof p[n] === "function" ? p[n](model) : "missing"]);
}

const SAMPLE_SETTINGS = {
  steeringMode: "all",
  followUpMode: "bogus",
  compaction: { reserveTokens: 100, modelOverrides: { "a/b": { keepRecentTokens: 5 } } },
  retry: { maxRetries: 9, provider: { timeoutMs: 3 } },
  terminal: { imageWidthCells: 7.5, images: false, trueColor: true },
  defaultTools: ["-bash", "+grep"],
  outputPad: 0,
  markdown: { mermaid: "final" },
  quietStartup: "header",
  theme: "x/y",
  httpIdleTimeoutMs: "disabled",
  extensions: ["a"],
  fullscreenWheelScrollLines: 500,
  modelThinkingLevels: { "a/b": "high" },
  defaultProjectTrust: "always",
  cacheWarming: "off",
};

describe("SettingsManager", () => {
  refTest("every getter answers as the reference's on the same settings (empty and many keys)", async () => {
    for (const settings of [{}, SAMPLE_SETTINGS]) {
      const rows = await compareGetters(settings);
      expect(rows.length).toBeGreaterThan(65);
      for (const [, r, p] of rows) expect(p).toEqual(r);
    }
  });

  refTest("every setter leaves the same merged, global and project settings as the reference's", async () => {
    const { SettingsManager: R } = await ref("core/settings-manager.js");
    const setters = Object.getOwnPropertyNames(R.prototype).filter((n) => n.startsWith("set") && n !== "setEnableAnalytics" && n !== "setProjectTrusted");
    expect(setters.length).toBeGreaterThan(50);
    for (const name of setters) {
      const args =
        name === "setModelThinkingLevel" ? ["a", "b", "high"]
        : name === "setDefaultModelAndProvider" || name === "setExtensionChangelogVersion" ? ["a", "b"]
        : /Paths|Packages|NpmCommand|EnabledModels/.test(name) ? [["x"]]
        : /Width|Padding|Visible|Lines|Timeout/.test(name) ? [7.7]
        : name === "setWarnings" ? [{ a: true }]
        : ["v"];
      const r = R.inMemory({ terminal: { showImages: false } });
      const p = pion.SettingsManager.inMemory({ terminal: { showImages: false } });
      r[name](...args);
      p[name](...args);
      await r.flush();
      expect([name, p.getSettings(), p.getGlobalSettings(), p.getProjectSettings()]).toEqual([name, r.getSettings(), r.getGlobalSettings(), r.getProjectSettings()]);
    }
  });

  test("create reads PION_HOME's and a trusted project's settings; the project's win", () => {
    const home = tmp("pion-sm-home-");
    const cwd = tmp("pion-sm-cwd-");
    writeFileSync(join(home, "settings.json"), JSON.stringify({ defaultModel: "m1", defaultProvider: "p1", compaction: { enabled: false, reserveTokens: 10 } }));
    mkdirSync(join(cwd, ".pion"));
    writeFileSync(join(cwd, ".pion", "settings.json"), JSON.stringify({ defaultModel: "m2", compaction: { reserveTokens: 20 } }));
    const sm = pion.SettingsManager.create(cwd, home);
    expect(sm.getDefaultModel()).toBe("m2");
    expect(sm.getDefaultProvider()).toBe("p1");
    expect(sm.getCompactionSettings()).toEqual({ enabled: false, reserveTokens: 20, keepRecentTokens: 20000 });
    expect(sm.getGlobalSettings().defaultModel).toBe("m1");
    expect(sm.getProjectSettings().defaultModel).toBe("m2");
    const untrusted = pion.SettingsManager.create(cwd, home, { projectTrusted: false });
    expect(untrusted.getDefaultModel()).toBe("m1");
    expect(() => untrusted.setProjectSkillPaths(["s"])).toThrow(/not trusted/);
  });

  test("a setter writes the one key into PION_HOME's settings.json, keeping the others; a project setter writes .pion/settings.json", () => {
    const home = tmp("pion-sm-home-");
    const cwd = tmp("pion-sm-cwd-");
    writeFileSync(join(home, "settings.json"), JSON.stringify({ custom: 1, images: { blockImages: true } }));
    const sm = pion.SettingsManager.create(cwd, home);
    sm.setDefaultThinkingLevel("high");
    sm.setImageAutoResize(false);
    expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8"))).toEqual({ custom: 1, images: { blockImages: true, autoResize: false }, defaultThinkingLevel: "high" });
    expect(sm.getDefaultThinkingLevel()).toBe("high");
    expect(pion.SettingsManager.create(cwd, home).getImageAutoResize()).toBe(false);
    sm.setProjectPromptTemplatePaths(["prompts-a"]);
    expect(JSON.parse(readFileSync(join(cwd, ".pion", "settings.json"), "utf8"))).toEqual({ prompts: ["prompts-a"] });
    expect(sm.getPromptTemplatePaths()).toEqual(["prompts-a"]);
    expect(sm.drainErrors()).toEqual([]);
  });

  test("a settings file that does not parse is an error to drain, and is never overwritten", () => {
    const home = tmp("pion-sm-home-");
    writeFileSync(join(home, "settings.json"), "{ nope");
    const sm = pion.SettingsManager.create(tmp("pion-sm-cwd-"), home);
    const errors = sm.drainErrors();
    expect(errors).toHaveLength(1);
    expect(errors[0].scope).toBe("global");
    sm.setDefaultModel("x");
    expect(readFileSync(join(home, "settings.json"), "utf8")).toBe("{ nope");
  });
});

describe("trust and credentials", () => {
  test("ProjectTrustStore saves in agentDir/trust.json; the nearest saved parent decides; null forgets", () => {
    const home = tmp("pion-trust-home-");
    const project = tmp("pion-trust-proj-");
    mkdirSync(join(project, "sub"));
    const store = new pion.ProjectTrustStore(home);
    expect(store.get(project)).toBeNull();
    store.set(project, true);
    expect(JSON.parse(readFileSync(join(home, "trust.json"), "utf8"))).toEqual({ [project]: true });
    expect(store.getEntry(join(project, "sub"))).toEqual({ path: project, decision: true });
    store.setMany([{ path: join(project, "sub"), decision: false }]);
    expect(store.get(join(project, "sub"))).toBe(false);
    store.set(join(project, "sub"), null);
    expect(store.get(join(project, "sub"))).toBe(true);
  });

  refTest("ProjectTrustStore reads the reference's trust.json as the reference does", async () => {
    const { ProjectTrustStore: R } = await ref("core/trust-manager.js");
    const home = tmp("pion-trust-home-");
    const project = tmp("pion-trust-proj-");
    new R(home).set(project, false);
    expect(new pion.ProjectTrustStore(home).getEntry(join(project, "x"))).toEqual(new R(home).getEntry(join(project, "x")));
  });

  refTest("hasTrustRequiringProjectResources agrees with the reference on .pi settings, skills and an empty folder", async () => {
    const { hasTrustRequiringProjectResources: R } = await ref("core/trust-manager.js");
    const empty = tmp("pion-res-");
    const withSettings = tmp("pion-res-");
    mkdirSync(join(withSettings, ".pi"));
    writeFileSync(join(withSettings, ".pi", "settings.json"), "{}");
    const withSkills = tmp("pion-res-");
    mkdirSync(join(withSkills, ".agents", "skills"), { recursive: true });
    for (const dir of [empty, withSettings, withSkills]) expect(pion.hasTrustRequiringProjectResources(dir)).toBe(R(dir));
    expect(pion.hasTrustRequiringProjectResources(withSettings)).toBe(true);
  });

  test("readStoredCredential returns a provider's stored entry, undefined for a missing provider or file", () => {
    const dir = tmp("pion-auth-");
    const file = join(dir, "auth.json");
    writeFileSync(file, JSON.stringify({ anthropic: { type: "api_key", key: "$KEY" } }));
    expect(pion.readStoredCredential("anthropic", file)).toEqual({ type: "api_key", key: "$KEY" });
    expect(pion.readStoredCredential("openai", file)).toBeUndefined();
    expect(pion.readStoredCredential("anthropic", join(dir, "none.json"))).toBeUndefined();
    const err = new pion.CredentialSynchronizationError("openai", "login", undefined, { cause: new Error("x") });
    expect(err).toBeInstanceOf(Error);
    expect([err.name, err.providerId, err.operation, (err.cause as Error).message]).toEqual(["CredentialSynchronizationError", "openai", "login", "x"]);
  });
});

function skillFolder(): string {
  const root = tmp("pion-skills-");
  const skill = (name: string, description: string, extra = "") => {
    mkdirSync(join(root, "skills", name), { recursive: true });
    writeFileSync(join(root, "skills", name, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n${extra}---\nBody of ${name}\n`);
  };
  skill("alpha", "Does <alpha> & 'quotes'");
  skill("beta", "The second");
  skill("hidden", "Not for the model", "disable-model-invocation: true\n");
  return root;
}
const byName = (skills: { name: string }[]) => [...skills].sort((a, b) => a.name.localeCompare(b.name));

describe("skills and context files", () => {
  refTest("loadSkillsFromDir, loadSkills and formatSkillsForPrompt equal the reference's on the same folder", async () => {
    const R = await ref("core/skills.js");
    const root = skillFolder();
    for (const source of ["user", "path", "custom"]) {
      const opts = { dir: join(root, "skills"), source };
      expect(byName(pion.loadSkillsFromDir(opts).skills)).toEqual(byName(R.loadSkillsFromDir(opts).skills));
    }
    const opts = { cwd: root, agentDir: root, skillPaths: [], includeDefaults: true };
    const mine = byName(pion.loadSkills(opts).skills);
    expect(mine.map((s) => s.name)).toEqual(["alpha", "beta", "hidden"]);
    expect(mine).toEqual(byName(R.loadSkills(opts).skills));
    const explicit = { cwd: "/", agentDir: join(root, "none"), skillPaths: [join(root, "skills", "beta")], includeDefaults: false };
    expect(pion.loadSkills(explicit)).toEqual(R.loadSkills(explicit));
    for (const tool of [undefined, "read", "bash", "indirect"]) expect(pion.formatSkillsForPrompt(mine, tool)).toBe(R.formatSkillsForPrompt(mine, tool));
    expect(pion.formatSkillsForPrompt([])).toBe("");
  });

  refTest("parseSkillBlock takes apart what the reference's does", async () => {
    const { parseSkillBlock: R } = await ref("core/agent-session.js");
    const texts = ['<skill name="a" location="/x/SKILL.md">\nline\nline2\n</skill>', '<skill name="a" location="/x">\nc\n</skill>\n\n  do it  ', "plain text", '<skill name="a" location="/x">\n\n</skill>'];
    for (const t of texts) expect(pion.parseSkillBlock(t)).toEqual(R(t));
    expect(pion.parseSkillBlock(texts[1]).userMessage).toBe("do it");
  });

  test("loadProjectContextFiles: agentDir's AGENTS.md first, then root down to cwd", () => {
    const home = tmp("pion-ctx-home-");
    const cwd = tmp("pion-ctx-cwd-");
    mkdirSync(join(cwd, "inner"));
    writeFileSync(join(home, "AGENTS.md"), "global");
    writeFileSync(join(cwd, "CLAUDE.md"), "outer");
    writeFileSync(join(cwd, "inner", "AGENTS.md"), "inner");
    expect(pion.loadProjectContextFiles({ cwd: join(cwd, "inner"), agentDir: home })).toEqual([
      { path: join(home, "AGENTS.md"), content: "global" },
      { path: join(cwd, "CLAUDE.md"), content: "outer" },
      { path: join(cwd, "inner", "AGENTS.md"), content: "inner" },
    ]);
  });

  refTest("createSyntheticSourceInfo equals the reference's", async () => {
    const { createSyntheticSourceInfo: R } = await ref("core/source-info.js");
    for (const o of [{ source: "x" }, { source: "local", scope: "user", baseDir: "/b" }, { source: "s", origin: "package", changelogPath: "/c" }]) expect(pion.createSyntheticSourceInfo("/p", o)).toEqual(R("/p", o));
  });
});

const numbered = (n: number, changeEvery: number) => Array.from({ length: n }, (_, i) => (changeEvery && i % changeEvery === 0 ? `L${i}` : `l${i}`)).join("\n");
const DIFF_CASES: [string, string][] = [
  ["a\nb\nc\n", "a\nB\nc\n"],
  ["", ""],
  ["same", "same"],
  ["", "new\n"],
  ["old\n", ""],
  ["a", "a\n"],
  [numbered(40, 0), numbered(40, 7)],
  [numbered(12, 0), `${numbered(12, 0)}\nmore`],
];

describe("diffs, images, shell, event bus, tool wrappers", () => {
  refTest("generateDiffString and generateUnifiedPatch equal the reference's for several context sizes", async () => {
    const R = await ref("core/tools/edit-diff.js");
    for (const [a, b] of DIFF_CASES)
      for (const ctx of [undefined, 0, 1, 4, 10]) {
        expect(pion.generateDiffString(a, b, ctx)).toEqual(R.generateDiffString(a, b, ctx));
        expect(pion.generateUnifiedPatch("f.txt", a, b, ctx)).toBe(R.generateUnifiedPatch("f.txt", a, b, ctx));
      }
  });

  test("generateDiffString numbers lines; generateUnifiedPatch has headers even without changes", () => {
    expect(pion.generateDiffString("a\nb\n", "a\nc\n")).toEqual({ diff: " 1 a\n-2 b\n+2 c", firstChangedLine: 2 });
    expect(pion.generateUnifiedPatch("p", "x", "x")).toBe("--- p\n+++ p\n");
  });

  const png = (chunks: [string, number][]) => {
    const bytes = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
    for (const [type, len] of chunks) bytes.push(0, 0, 0, len, ...[...type].map((c) => c.charCodeAt(0)), ...new Array(len + 4).fill(0));
    return new Uint8Array(bytes);
  };
  const bmp = (dib: number, planes: number, bpp: number, size = 100) => {
    const b = new Uint8Array(60);
    const view = new DataView(b.buffer);
    b.set([0x42, 0x4d]);
    view.setUint32(2, size, true);
    view.setUint32(10, dib === 12 ? 26 : 54, true);
    view.setUint32(14, dib, true);
    view.setUint16(dib === 12 ? 22 : 26, planes, true);
    view.setUint16(dib === 12 ? 24 : 28, bpp, true);
    return b;
  };
  const text = (s: string) => new TextEncoder().encode(s);
  const IMAGES: Record<string, Uint8Array> = {
    empty: new Uint8Array(),
    jpeg: new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2]),
    jpegLs: new Uint8Array([0xff, 0xd8, 0xff, 0xf7]),
    png: png([["IHDR", 13], ["IDAT", 5]]),
    apng: png([["IHDR", 13], ["acTL", 8], ["IDAT", 5]]),
    pngBadHeader: png([["IHDX", 13]]),
    pngSignatureOnly: png([]),
    gif: text("GIF89a...."),
    webp: text("RIFF\0\0\0\0WEBPVP8 "),
    text: text("hello"),
    bmp: bmp(40, 1, 24),
    bmpCore: bmp(12, 1, 8),
    bmpTwoPlanes: bmp(40, 2, 24),
    bmpOddDepth: bmp(40, 1, 7),
    bmpNoSize: bmp(40, 1, 24, 0),
    bmpShort: text("BM123"),
  };
  const EXPECTED: Record<string, string | null> = { jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp", bmp: "image/bmp", bmpCore: "image/bmp", bmpNoSize: "image/bmp" };

  test("detectSupportedImageMimeTypeFromFile reads the magic bytes; animated PNG and JPEG-LS are not supported", async () => {
    const dir = tmp("pion-img-");
    for (const [name, bytes] of Object.entries(IMAGES)) {
      writeFileSync(join(dir, name), bytes);
      expect([name, await pion.detectSupportedImageMimeTypeFromFile(join(dir, name))]).toEqual([name, EXPECTED[name] ?? null]);
    }
  });

  refTest("detectSupportedImageMimeTypeFromFile equals the reference's on the same small files", async () => {
    const { detectSupportedImageMimeTypeFromFile: R } = await ref("utils/mime.js");
    const dir = tmp("pion-img-");
    for (const [name, bytes] of Object.entries(IMAGES)) {
      writeFileSync(join(dir, name), bytes);
      expect([name, await pion.detectSupportedImageMimeTypeFromFile(join(dir, name))]).toEqual([name, await R(join(dir, name))]);
    }
  });

  refTest("formatDimensionNote equals the reference's", async () => {
    const { formatDimensionNote: R } = await ref("utils/image-resize.js");
    for (const r of [{ wasResized: false, originalWidth: 10, originalHeight: 10, width: 10, height: 10 }, { wasResized: true, originalWidth: 3000, originalHeight: 2000, width: 1568, height: 1045 }])
      expect(pion.formatDimensionNote(r)).toBe(R(r));
  });

  test("getShellConfig: a custom path that exists, bash from PATH otherwise; a missing custom path throws", () => {
    expect(pion.getShellConfig("/bin/sh")).toEqual({ shell: "/bin/sh", args: ["-c"] });
    expect(pion.getShellConfig()).toEqual({ shell: Bun.which("bash") ?? "bash", args: ["-c"] });
    expect(() => pion.getShellConfig("/no/such/shell")).toThrow("Custom shell path not found: /no/such/shell");
  });

  refTest("getShellConfig equals the reference's for a custom path", async () => {
    const { getShellConfig: R } = await ref("utils/shell.js");
    expect(pion.getShellConfig("/bin/sh")).toEqual(R("/bin/sh"));
  });

  test("createEventBus: handlers get the data, unsubscribe and clear stop them, a throwing handler does not stop the others", () => {
    const bus = pion.createEventBus();
    const got: unknown[] = [];
    const off = bus.on("c", (d: unknown) => got.push(["a", d]));
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args);
    try {
      bus.on("c", () => {
        throw new Error("boom");
      });
      bus.on("c", (d: unknown) => got.push(["b", d]));
      bus.emit("c", 1);
      off();
      bus.emit("c", 2);
      bus.clear();
      bus.emit("c", 3);
    } finally {
      console.error = original;
    }
    expect(got).toEqual([["a", 1], ["b", 1], ["b", 2]]);
    expect(errors.length).toBe(2);
  });

  test("wrapRegisteredTool(s) call the definition with the runner's context unless one is passed", async () => {
    const calls: unknown[] = [];
    const definition = { name: "t", label: "T", description: "d", parameters: { type: "object" }, execute: async (...args: unknown[]) => (calls.push(args), "ok") };
    const runner = { createToolContext: (id: string) => ({ from: "runner", id }) };
    const [tool] = (pion.wrapRegisteredTools as Fn)([{ definition }], runner);
    expect([tool.name, tool.label, tool.description, tool.parameters]).toEqual(["t", "T", "d", { type: "object" }]);
    expect(await tool.execute("id1", { x: 1 })).toBe("ok");
    await tool.execute("id2", {}, undefined, undefined, { own: true });
    expect(calls).toEqual([["id1", { x: 1 }, undefined, undefined, { from: "runner", id: "id1" }], ["id2", {}, undefined, undefined, { own: true }]]);
  });
});

const ARGV: string[][] = [
  [], ["hello"], ["-p", "hi there"], ["--print", "@a.txt", "msg"], ["--mode", "json", "x"], ["--mode", "rpc"], ["--provider", "anthropic", "--model", "sonnet:high"],
  ["--thinking", "high"], ["--thinking", "bogus"], ["--models", "a, b,,c"], ["--tools", "read,bash"], ["--tools", "+grep,-bash"], ["--tools", "read,+grep"],
  ["-t", "read", "-xt", "bash,edit"], ["-c"], ["-r"], ["--session", "abc"], ["--session-id", "id1"], ["--fork", "f"], ["--no-session", "--session-dir", "/d"],
  ["-e", "a.ts", "--extension", "b.ts", "-ne"], ["--skill", "s", "--prompt-template", "p", "-ns", "-np", "-nc"], ["--list-models"], ["--list-models", "son"], ["--list-models", "@x"],
  ["--export", "s.jsonl", "out.html"], ["--system-prompt", "sys", "--append-system-prompt", "a1", "--append-system-prompt", "a2"], ["--api-key", "k"], ["-n", "name"],
  ["--verbose", "--offline", "--no-mcp", "-nt", "-nbt"], ["-a"], ["-na"], ["--custom-flag", "value", "msg"], ["--custom=1"], ["--custom", "--verbose"], ["--", "--not-a-flag", "@f"],
  ["--tui-mode", "regular"], ["--theme", "t", "--use-theme", "dark", "--no-themes"], ["-h"], ["-v"], ["a", "@b", "c"],
];

describe("parseArgs", () => {
  refTest("gives the reference's Args for many command lines", async () => {
    const { parseArgs: R } = await ref("cli/args.js");
    for (const argv of ARGV) {
      const r = R(argv);
      const p = pion.parseArgs(argv);
      expect([argv, { ...p, unknownFlags: [...p.unknownFlags] }]).toEqual([argv, { ...r, unknownFlags: [...r.unknownFlags] }]);
    }
  });

  test("messages, @files, unknown options and pion's own options; a bad command line is an error diagnostic", () => {
    const args = pion.parseArgs(["--model", "m", "@f.txt", "--sandbox", "read-only", "--x", "1", "go"]);
    expect([args.model, args.fileArgs, args.messages, [...args.unknownFlags]]).toEqual(["m", ["f.txt"], ["go"], [["x", "1"], ["sandbox", "read-only"]]]);
    for (const bad of [["-x"], ["--mode", "print"], ["--mode"], ["--tui-mode", "bad"]]) expect(pion.parseArgs(bad).diagnostics.map((d: { type: string }) => d.type)).toEqual(["error"]);
  });
});

describe("ModelRegistry", () => {
  /** Runs `fn` with PION_HOME at a fresh folder holding `models` as models.json, and `env` set. */
  async function withHome<T>(files: Record<string, unknown>, env: Record<string, string>, fn: (home: string) => Promise<T> | T): Promise<T> {
    const home = tmp("pion-models-");
    for (const [name, content] of Object.entries(files)) writeFileSync(join(home, name), typeof content === "string" ? content : JSON.stringify(content));
    const saved = { PION_HOME: process.env.PION_HOME, ...Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]])) };
    Object.assign(process.env, { PION_HOME: home, ...env });
    try {
      return await fn(home);
    } finally {
      for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
    }
  }
  const MODELS = {
    providers: {
      "test-prov": { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "$PION_SURFACE_TEST_KEY", models: [{ id: "m1", name: "Model One", contextWindow: 1000, maxTokens: 100 }] },
      "keyless-prov": { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "$PION_SURFACE_UNSET_KEY", models: [{ id: "m2" }] },
    },
  };

  test("reads PION_HOME's models.json: find, getAll, getAvailable, auth status and request auth", async () => {
    await withHome({ "models.json": MODELS }, { PION_SURFACE_TEST_KEY: "sk-test" }, async () => {
      const reg = new pion.ModelRegistry();
      const m1 = reg.find("test-prov", "m1");
      expect([m1?.id, m1?.name, m1?.provider, m1?.contextWindow]).toEqual(["m1", "Model One", "test-prov", 1000]);
      expect(reg.findOfType("chat", "test-prov", "m1")).toEqual(m1);
      expect(reg.findOfType("image", "test-prov", "m1")).toBeUndefined();
      expect(reg.getAll().some((m: { id: string }) => m.id === "m2")).toBe(true);
      const available = reg.getAvailable().map((m: { provider: string; id: string }) => `${m.provider}/${m.id}`);
      expect(available).toContain("test-prov/m1");
      expect(available).not.toContain("keyless-prov/m2");
      expect(reg.hasConfiguredAuth(m1)).toBe(true);
      expect(await reg.getApiKeyAndHeaders(m1)).toEqual({ ok: true, apiKey: "sk-test" });
      expect(await reg.getApiKeyForProvider("test-prov")).toBe("sk-test");
      expect(reg.getProviderAuthStatus("test-prov")).toEqual({ configured: true, source: "models_json_key" });
      expect(reg.getProviderAuthStatus("keyless-prov")).toEqual({ configured: false });
      expect((await reg.getApiKeyAndHeaders({ provider: "keyless-prov" })).ok).toBe(false);
      expect(reg.isUsingOAuth(m1)).toBe(false);
      expect(reg.getError()).toBeUndefined();
    });
  });

  test("an auth.json login is OAuth; refresh reads the files again; a models.json problem is getError", async () => {
    await withHome({ "models.json": MODELS, "auth.json": { "test-prov": { type: "oauth", access: "acc", refresh: "ref", expires: Date.now() + 3_600_000 } } }, {}, async (home) => {
      const reg = new pion.ModelRegistry();
      expect(reg.isUsingOAuth({ provider: "test-prov" })).toBe(true);
      expect(reg.getProviderAuthStatus("test-prov").source).toBe("stored");
      writeFileSync(join(home, "models.json"), "{ broken");
      expect(reg.find("test-prov", "m1")).toBeDefined();
      await reg.refresh();
      expect(reg.find("test-prov", "m1")).toBeUndefined();
      expect(reg.getError()).toContain("models.json");
    });
  });

  test("an argument that is not a ModelRuntime, classifiers and registering providers are refused with a clear error", async () => {
    expect(() => new pion.ModelRegistry({})).toThrow(/takes a ModelRuntime/);
    const reg = new pion.ModelRegistry();
    expect(() => reg.registerProvider("x", {})).toThrow(/pi.registerProvider/);
    await expect(reg.classify()).rejects.toThrow(/chat models only/);
  });
});

describe("RpcClient", () => {
  test("starts pion in RPC mode, answers commands with the reference's part of the data, stops it", async () => {
    const client = new pion.RpcClient({ args: ["--no-session"], cwd: tmp("pion-rpc-") });
    await client.start();
    try {
      const state = await client.getState();
      expect(state.isStreaming).toBe(false);
      expect(state.messageCount).toBe(0);
      expect(await client.getMessages()).toEqual([]);
      expect(Array.isArray(await client.getAvailableThinkingLevels())).toBe(true);
      await client.setSessionName("named");
      expect((await client.getState()).sessionName).toBe("named");
      await expect(client.start()).rejects.toThrow("already started");
    } finally {
      await client.stop();
    }
    await expect(client.getState()).rejects.toThrow("not started");
  });

  test("pion exiting on a bad flag rejects start (within its first 100 ms) or the next command, with pion's stderr", async () => {
    const client = new pion.RpcClient({ args: ["-zz"] });
    const failure = await client.start().then(
      () => client.getState().then(() => "answered", (err: Error) => err.message),
      (err: Error) => err.message,
    );
    expect(failure).toMatch(/Unknown option: -zz/);
    await client.stop();
  });
});
