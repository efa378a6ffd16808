/**
 * The reference's `SettingsManager` over pion's settings files. `create(cwd, agentDir)` reads
 * what pion reads (config.ts): the user's files (the reference's agent folder, then `agentDir`)
 * and, when the project is trusted, its `.pi/` and `.pion/` settings, merged by pion's rules.
 * A setter writes one key into the file pion lets win (`agentDir/settings.json`, the project's
 * `.pion/settings.json`), keeping the file's other keys, and the manager reads the files again.
 * `inMemory` keeps both layers in memory, merged as the reference merges them (deep, project wins).
 * Getters answer with the reference's defaults for keys no file sets.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { loadSettings, loadUserSettings, pionHome, type Settings } from "../../config.ts";
import { projectPaths } from "../../resources/project-paths.ts";
import { emptyMerge, mergeSettingsFile, RESOURCE_LIST_KEYS, type MergedSettings } from "../../settings-files.ts";
import { expandHome } from "../../util/home-path.ts";
import { readJsonFile } from "../../util/json-file.ts";

type Obj = Record<string, unknown>;
type Scope = "global" | "project";
export interface SettingsError {
  scope: Scope;
  path?: string;
  error: Error;
}

const isObj = (x: unknown): x is Obj => typeof x === "object" && x !== null && !Array.isArray(x);

/** The reference's layer merge: nested objects merged all the way down, `undefined` never overrides. */
function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    out[key] = isObj(out[key]) && isObj(value) ? deepMerge(out[key] as Obj, value) : value;
  }
  return out;
}

const at = (obj: Obj, path: string): unknown => path.split(".").reduce<unknown>((o, k) => (isObj(o) ? o[k] : undefined), obj);

/** The settings keys pion adds to what it loads (where each came from); not settings themselves. */
const META_KEYS = ["settingSources", "listedResources", "listedPackages", "projectDeny", "projectSandbox"];

/** pion's loaded settings as a plain settings object: the combined resource lists back under their keys. */
function plain(s: Settings): Obj {
  const out: Obj = { ...s };
  for (const key of META_KEYS) delete out[key];
  for (const key of RESOURCE_LIST_KEYS) {
    const listed = s.listedResources?.[key];
    if (listed?.length) out[key] = listed.map((e) => e.entry);
  }
  if (s.listedPackages?.length) out.packages = s.listedPackages.map((p) => p.entry);
  return out;
}

function plainMerge(m: MergedSettings): Obj {
  return plain({ ...m.values, listedResources: m.lists, listedPackages: m.packages } as Settings);
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

interface Layers {
  global: Obj;
  project: Obj;
  merged: Obj;
  errors: SettingsError[];
}

/** Where a manager's layers come from and where a change goes. */
interface Backing {
  load(trusted: boolean): Layers;
  /** Write `key` of `layer` into the scope's file (nested: only those keys of it). */
  persist(scope: Scope, layer: Obj, key: string, nested?: string): void;
  readonly paths: Partial<Record<Scope, string>>;
}

function fileBacking(cwd: string, agentDir: string): Backing {
  const paths = { global: join(agentDir, "settings.json"), project: join(cwd, ".pion", "settings.json") };
  return {
    paths,
    load(trusted) {
      const errors: SettingsError[] = [];
      let user: Settings = {};
      try {
        user = loadUserSettings(agentDir);
      } catch (e) {
        errors.push({ scope: "global", path: paths.global, error: asError(e) });
      }
      let project: Obj = {};
      let merged = plain(user);
      if (trusted) {
        try {
          const files = emptyMerge();
          for (const file of projectPaths(cwd).settings) mergeSettingsFile(files, file, (readJsonFile(file) as Obj | undefined) ?? {}, "project");
          project = plainMerge(files);
          merged = plain(loadSettings(agentDir, cwd, true, () => {}, user));
        } catch (e) {
          errors.push({ scope: "project", path: paths.project, error: asError(e) });
        }
      }
      return { global: plain(user), project, merged, errors };
    },
    persist(scope, layer, key, nested) {
      const file = paths[scope];
      const current = (readJsonFile(file) as Obj | undefined) ?? {};
      const value = layer[key];
      if (nested && isObj(value)) current[key] = { ...(isObj(current[key]) ? current[key] : {}), [nested]: value[nested] };
      else current[key] = value;
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(current, null, 2));
    },
  };
}

function memoryBacking(initial: Obj): Backing {
  const layers: Record<Scope, Obj> = { global: structuredClone(initial), project: {} };
  return {
    paths: {},
    load(trusted) {
      const project = trusted ? structuredClone(layers.project) : {};
      return { global: structuredClone(layers.global), project, merged: deepMerge(layers.global, project), errors: [] };
    },
    persist(scope, layer, key) {
      layers[scope][key] = structuredClone(layer[key]);
    },
  };
}

const DEFAULT_TOOL_NAMES = ["read", "bash", "edit", "write"];
const isModifier = (e: string) => e.startsWith("+") || e.startsWith("-");

/** `defaultTools` as the reference resolves it: plain names replace the defaults, then `+x` adds and `-x` removes. */
function resolveDefaultTools(entries: string[]): string[] {
  const plainNames = entries.filter((e) => !isModifier(e));
  const tools = plainNames.length > 0 || entries.length === 0 ? [...plainNames] : [...DEFAULT_TOOL_NAMES];
  for (const e of entries.filter(isModifier)) {
    const name = e.slice(1);
    const i = tools.indexOf(name);
    if (e.startsWith("+") && i === -1 && name) tools.push(name);
    else if (e.startsWith("-") && i !== -1) tools.splice(i, 1);
  }
  return tools;
}

function timeoutSetting(value: unknown, name: string): number | undefined {
  const ms = typeof value === "string" ? (value.trim().toLowerCase() === "disabled" ? 0 : value.trim() ? Number(value.trim()) : undefined) : value;
  if (typeof ms === "number" && Number.isFinite(ms) && ms >= 0) return Math.floor(ms);
  if (value !== undefined) throw new Error(`Invalid ${name} setting: ${String(value)}`);
  return undefined;
}

function tokenSetting(merged: Obj, field: "reserveTokens" | "keepRecentTokens", model?: { provider: string; id: string }): number {
  const check = (v: unknown, where: string) => {
    if (v !== undefined && (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0))
      throw new Error(`Invalid ${where} setting: ${String(v)}. Expected a non-negative safe integer.`);
    return v as number | undefined;
  };
  const ordinary = check(at(merged, `compaction.${field}`), `compaction.${field}`);
  const key = model ? `${model.provider}/${model.id}` : undefined;
  const entry = key === undefined ? undefined : (at(merged, "compaction.modelOverrides") as Obj | undefined)?.[key];
  if (entry !== undefined && !isObj(entry)) throw new Error(`Invalid compaction.modelOverrides["${key}"] setting: ${String(entry)}. Expected an object.`);
  const override = check(entry?.[field], `compaction.modelOverrides["${key}"].${field}`);
  return override ?? ordinary ?? (field === "reserveTokens" ? 16384 : 20000);
}

export class SettingsManager {
  #backing: Backing;
  #trusted: boolean;
  #layers!: Layers;
  #errors: SettingsError[] = [];

  private constructor(backing: Backing, trusted: boolean) {
    this.#backing = backing;
    this.#trusted = trusted;
    this.#load();
  }

  static create(cwd: string, agentDir: string = pionHome(), options: { projectTrusted?: boolean } = {}): SettingsManager {
    return new SettingsManager(fileBacking(resolve(expandHome(cwd)), resolve(expandHome(agentDir))), options.projectTrusted ?? true);
  }

  static inMemory(settings: Obj = {}, options: { projectTrusted?: boolean } = {}): SettingsManager {
    return new SettingsManager(memoryBacking(settings), options.projectTrusted ?? true);
  }

  #load(): void {
    this.#layers = this.#backing.load(this.#trusted);
    this.#errors.push(...this.#layers.errors);
  }

  /** The merged value at a dotted path. */
  get(path: string): unknown {
    return at(this.#layers.merged, path);
  }

  /** Change `key` (or one `nested` key of it) in a scope's layer, write it, and read the files again. */
  #change(scope: Scope, key: string, value: unknown, nested?: string): void {
    if (scope === "project" && !this.#trusted) throw new Error("Project is not trusted; refusing to write project settings");
    if (this.#layers.errors.some((e) => e.scope === scope)) return; // a file that failed to load is never overwritten
    const layer = this.#layers[scope];
    if (nested) layer[key] = { ...(isObj(layer[key]) ? layer[key] : {}), [nested]: value };
    else if (value === undefined) delete layer[key];
    else layer[key] = value;
    try {
      this.#backing.persist(scope, layer, key, nested);
      this.#load();
    } catch (e) {
      this.#errors.push({ scope, ...(this.#backing.paths[scope] ? { path: this.#backing.paths[scope] } : {}), error: asError(e) });
    }
  }

  set(key: string, value: unknown, nested?: string): void {
    this.#change("global", key, value, nested);
  }

  getSettings(): Obj {
    return structuredClone(this.#layers.merged);
  }
  getGlobalSettings(): Obj {
    return structuredClone(this.#layers.global);
  }
  getProjectSettings(): Obj {
    return structuredClone(this.#layers.project);
  }
  isProjectTrusted(): boolean {
    return this.#trusted;
  }
  setProjectTrusted(trusted: boolean): void {
    if (trusted === this.#trusted) return;
    this.#trusted = trusted;
    this.#load();
  }
  async reload(): Promise<void> {
    this.#load();
  }
  applyOverrides(overrides: Obj): void {
    this.#layers.merged = deepMerge(this.#layers.merged, overrides);
  }
  /** Writes happen when a setter is called; nothing is left pending. */
  async flush(): Promise<void> {}
  drainErrors(): SettingsError[] {
    return this.#errors.splice(0);
  }

  getExtensionChangelogVersion(key: string): string | undefined {
    return (this.get("extensionChangelogVersions") as Obj | undefined)?.[key] as string | undefined;
  }
  setExtensionChangelogVersion(key: string, version: string): void {
    this.set("extensionChangelogVersions", version, key);
  }
  getSessionDir(): string | undefined {
    const dir = this.get("sessionDir") as string | undefined;
    return dir ? expandHome(dir) : dir;
  }
  getShellPath(): string | undefined {
    const path = this.get("shellPath") as string | undefined;
    return path ? expandHome(path) : path;
  }
  setDefaultModelAndProvider(provider: string, modelId: string): void {
    this.set("defaultProvider", provider);
    this.set("defaultModel", modelId);
  }
  /** Any value set counts (the reference does not check these two). */
  getSteeringMode(): string {
    return (this.get("steeringMode") as string | undefined) || "one-at-a-time";
  }
  getFollowUpMode(): string {
    return (this.get("followUpMode") as string | undefined) || "one-at-a-time";
  }
  getThemeSetting(): string | undefined {
    const theme = this.get("theme");
    return typeof theme === "string" ? theme : undefined;
  }
  getTheme(): string | undefined {
    const theme = this.getThemeSetting();
    return theme?.includes("/") ? undefined : theme;
  }
  getModelThinkingLevel(provider: string, modelId: string): string | undefined {
    return (this.get("modelThinkingLevels") as Obj | undefined)?.[`${provider}/${modelId}`] as string | undefined;
  }
  getAllModelThinkingLevels(): Obj {
    return { ...((this.get("modelThinkingLevels") as Obj | undefined) ?? {}) };
  }
  setModelThinkingLevel(provider: string, modelId: string, level: string): void {
    this.set("modelThinkingLevels", { ...((this.#layers.global.modelThinkingLevels as Obj | undefined) ?? {}), [`${provider}/${modelId}`]: level });
  }
  removeModelThinkingLevel(provider: string, modelId: string): void {
    const levels = this.#layers.global.modelThinkingLevels as Obj | undefined;
    if (!levels) return;
    const { [`${provider}/${modelId}`]: _, ...rest } = levels;
    this.set("modelThinkingLevels", Object.keys(rest).length ? rest : undefined);
  }
  getCompactionReserveTokens(model?: { provider: string; id: string }): number {
    return tokenSetting(this.#layers.merged, "reserveTokens", model);
  }
  getCompactionKeepRecentTokens(model?: { provider: string; id: string }): number {
    return tokenSetting(this.#layers.merged, "keepRecentTokens", model);
  }
  getCompactionSettings(model?: { provider: string; id: string }) {
    return { enabled: this.get("compaction.enabled") ?? true, reserveTokens: this.getCompactionReserveTokens(model), keepRecentTokens: this.getCompactionKeepRecentTokens(model) };
  }
  getBranchSummarySettings() {
    return { reserveTokens: this.get("branchSummary.reserveTokens") ?? 16384, skipPrompt: this.get("branchSummary.skipPrompt") ?? false };
  }
  getRetrySettings() {
    return {
      enabled: this.get("retry.enabled") ?? true,
      maxRetries: this.get("retry.maxRetries") ?? 3,
      baseDelayMs: this.get("retry.baseDelayMs") ?? 2000,
      maxAgentDelayMs: this.get("retry.maxAgentDelayMs") ?? 60_000,
    };
  }
  getProviderRetrySettings() {
    return {
      timeoutMs: this.get("retry.provider.timeoutMs"),
      maxRetries: this.get("retry.provider.maxRetries"),
      maxRetryDelayMs: this.get("retry.provider.maxRetryDelayMs") ?? 60_000,
    };
  }
  getHttpIdleTimeoutMs(): number {
    return timeoutSetting(this.get("httpIdleTimeoutMs"), "httpIdleTimeoutMs") ?? 300_000;
  }
  setHttpIdleTimeoutMs(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`Invalid httpIdleTimeoutMs setting: ${String(ms)}`);
    this.set("httpIdleTimeoutMs", Math.floor(ms));
  }
  getWebSocketConnectTimeoutMs(): number | undefined {
    return timeoutSetting(this.get("websocketConnectTimeoutMs"), "websocketConnectTimeoutMs");
  }
  getExternalEditorCommand(): string {
    const editor = this.get("externalEditor");
    if (typeof editor === "string" && editor.trim() !== "") return editor;
    return process.env.VISUAL || process.env.EDITOR || (process.platform === "win32" ? "notepad" : "nano");
  }
  setEnableAnalytics(enabled: boolean): void {
    this.set("enableAnalytics", enabled);
    if (enabled && !this.#layers.global.trackingId) this.set("trackingId", crypto.randomUUID());
  }
  getOrCreateDeviceId(): string {
    if (!this.#layers.global.deviceId) this.set("deviceId", crypto.randomUUID());
    return this.#layers.global.deviceId as string;
  }
  getNpmCommand(): string[] | undefined {
    const cmd = this.get("npmCommand") as string[] | undefined;
    return cmd ? [...cmd] : undefined;
  }
  setNpmCommand(command: string[] | undefined): void {
    this.set("npmCommand", command ? [...command] : undefined);
  }
  getTerminalCapabilityOverrides(): Obj {
    const images = this.get("terminal.images");
    const trueColor = this.get("terminal.trueColor");
    const hyperlinks = this.get("terminal.hyperlinks");
    return {
      ...(images === "kitty" || images === "iterm2" ? { images } : images === false ? { images: null } : {}),
      ...(typeof trueColor === "boolean" ? { trueColor } : {}),
      ...(typeof hyperlinks === "boolean" ? { hyperlinks } : {}),
    };
  }
  getImageWidthCells(): number {
    const w = this.get("terminal.imageWidthCells");
    return typeof w === "number" && Number.isFinite(w) ? Math.max(1, Math.floor(w)) : 60;
  }
  getClearOnShrink(): boolean {
    return (this.get("terminal.clearOnShrink") as boolean | undefined) ?? process.env.PI_CLEAR_ON_SHRINK === "1";
  }
  getFullscreenWheelScrollLines(): number | "auto" {
    const n = this.get("fullscreenWheelScrollLines");
    return typeof n === "number" && Number.isFinite(n) ? clamp(n, 1, 100) : "auto";
  }
  setFullscreenWheelScrollLines(lines: number | "auto"): void {
    this.set("fullscreenWheelScrollLines", lines === "auto" ? lines : clamp(lines, 1, 100));
  }
  getDefaultTools(): string[] | undefined {
    const tools = this.get("defaultTools");
    if (tools === undefined) return undefined;
    return resolveDefaultTools(Array.isArray(tools) ? tools.filter((t): t is string => typeof t === "string") : []);
  }
  getShowHardwareCursor(): boolean {
    return (this.get("showHardwareCursor") as boolean | undefined) ?? process.env.PI_HARDWARE_CURSOR === "1";
  }
  getWarnings(): Obj {
    return { ...((this.get("warnings") as Obj | undefined) ?? {}) };
  }
  setWarnings(warnings: Obj): void {
    this.set("warnings", { ...warnings });
  }
  /** Global-only reads: a project cannot decide these. */
  getDefaultProjectTrust(): string {
    const v = this.#layers.global.defaultProjectTrust;
    return v === "always" || v === "never" ? v : "ask";
  }
  getCacheWarmingMode(): string {
    const v = this.#layers.global.cacheWarming;
    return v === "off" || v === "streaming" || v === "idle" ? v : "idle";
  }
  setProjectPackages(packages: unknown[]): void {
    this.#change("project", "packages", packages);
  }
  setProjectExtensionPaths(paths: string[]): void {
    this.#change("project", "extensions", paths);
  }
  setProjectSkillPaths(paths: string[]): void {
    this.#change("project", "skills", paths);
  }
  setProjectPromptTemplatePaths(paths: string[]): void {
    this.#change("project", "prompts", paths);
  }
  setProjectThemePaths(paths: string[]): void {
    this.#change("project", "themes", paths);
  }
}

const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.floor(n)));

// The plain accessors, one line each: [getter, path, default] and [setter, path, transform].
const PLAIN_GETTERS: [string, string, unknown][] = [
  ["getLastChangelogVersion", "lastChangelogVersion", undefined],
  ["getDefaultProvider", "defaultProvider", undefined],
  ["getDefaultModel", "defaultModel", undefined],
  ["getDefaultThinkingLevel", "defaultThinkingLevel", undefined],
  ["getShellCommandPrefix", "shellCommandPrefix", undefined],
  ["getTrackingId", "trackingId", undefined],
  ["getThinkingBudgets", "thinkingBudgets", undefined],
  ["getEnabledModels", "enabledModels", undefined],
  ["getTransport", "transport", "auto"],
  ["getCompactionEnabled", "compaction.enabled", true],
  ["getBranchSummarySkipPrompt", "branchSummary.skipPrompt", false],
  ["getRetryEnabled", "retry.enabled", true],
  ["getHideThinkingBlock", "hideThinkingBlock", false],
  ["getShowCacheMissNotices", "showCacheMissNotices", false],
  ["getCollapseChangelog", "collapseChangelog", false],
  ["getEnableInstallTelemetry", "enableInstallTelemetry", true],
  ["getEnableAnalytics", "enableAnalytics", false],
  ["getEnableSkillCommands", "enableSkillCommands", true],
  ["getShowImages", "terminal.showImages", true],
  ["getShowTerminalProgress", "terminal.showTerminalProgress", false],
  ["getFullscreenCopyOnSelect", "fullscreenCopyOnSelect", true],
  ["getImageAutoResize", "images.autoResize", true],
  ["getBlockImages", "images.blockImages", false],
  ["getDoubleEscapeAction", "doubleEscapeAction", "tree"],
  ["getEditorPaddingX", "editorPaddingX", 0],
  ["getAutocompleteMaxVisible", "autocompleteMaxVisible", 5],
  ["getCodeBlockIndent", "markdown.codeBlockIndent", "  "],
];
// Getters whose value counts only when it is one of the listed ones.
const CHOICE_GETTERS: [string, string, unknown[], unknown][] = [
  ["getSessionShareDestination", "sessionShareDestination", ["gist", "radius"], "auto"],
  ["getQuietStartup", "quietStartup", [true, "header"], false],
  ["getTuiMode", "tuiMode", ["regular"], "fullscreen"],
  ["getFullscreenExitOutput", "fullscreenExitOutput", ["resume-hint"], "transcript"],
  ["getFullscreenScrollbar", "fullscreenScrollbar", ["always", "hidden"], "auto"],
  ["getTreeFilterMode", "treeFilterMode", ["default", "no-tools", "user-only", "labeled-only", "all"], "default"],
  ["getOutputPad", "outputPad", [0], 1],
  ["getMermaidRenderingMode", "markdown.mermaid", ["off", "final"], "streaming"],
];
const LIST_GETTERS: [string, string][] = [
  ["getPackages", "packages"],
  ["getExtensionPaths", "extensions"],
  ["getSkillPaths", "skills"],
  ["getPromptTemplatePaths", "prompts"],
  ["getThemePaths", "themes"],
];
const SETTERS: [string, string, ((v: never) => unknown)?][] = [
  ["setLastChangelogVersion", "lastChangelogVersion"],
  ["setDefaultProvider", "defaultProvider"],
  ["setDefaultModel", "defaultModel"],
  ["setSteeringMode", "steeringMode"],
  ["setFollowUpMode", "followUpMode"],
  ["setTheme", "theme"],
  ["setDefaultThinkingLevel", "defaultThinkingLevel"],
  ["setTransport", "transport"],
  ["setSessionShareDestination", "sessionShareDestination"],
  ["setHideThinkingBlock", "hideThinkingBlock"],
  ["setShowCacheMissNotices", "showCacheMissNotices"],
  ["setShellPath", "shellPath"],
  ["setQuietStartup", "quietStartup"],
  ["setDefaultProjectTrust", "defaultProjectTrust"],
  ["setShellCommandPrefix", "shellCommandPrefix"],
  ["setCollapseChangelog", "collapseChangelog"],
  ["setEnableInstallTelemetry", "enableInstallTelemetry"],
  ["setCacheWarmingMode", "cacheWarming"],
  ["setPackages", "packages"],
  ["setExtensionPaths", "extensions"],
  ["setSkillPaths", "skills"],
  ["setPromptTemplatePaths", "prompts"],
  ["setThemePaths", "themes"],
  ["setEnableSkillCommands", "enableSkillCommands"],
  ["setTuiMode", "tuiMode"],
  ["setFullscreenExitOutput", "fullscreenExitOutput"],
  ["setFullscreenScrollbar", "fullscreenScrollbar"],
  ["setFullscreenCopyOnSelect", "fullscreenCopyOnSelect"],
  ["setEnabledModels", "enabledModels"],
  ["setDoubleEscapeAction", "doubleEscapeAction"],
  ["setTreeFilterMode", "treeFilterMode"],
  ["setShowHardwareCursor", "showHardwareCursor"],
  ["setOutputPad", "outputPad"],
  ["setCompactionEnabled", "compaction.enabled"],
  ["setRetryEnabled", "retry.enabled"],
  ["setShowImages", "terminal.showImages"],
  ["setClearOnShrink", "terminal.clearOnShrink"],
  ["setShowTerminalProgress", "terminal.showTerminalProgress"],
  ["setImageAutoResize", "images.autoResize"],
  ["setBlockImages", "images.blockImages"],
  ["setMermaidRenderingMode", "markdown.mermaid"],
  ["setImageWidthCells", "terminal.imageWidthCells", (n: number) => Math.max(1, Math.floor(n))],
  ["setEditorPaddingX", "editorPaddingX", (n: number) => clamp(n, 0, 3)],
  ["setAutocompleteMaxVisible", "autocompleteMaxVisible", (n: number) => clamp(n, 3, 20)],
];

const proto = SettingsManager.prototype as unknown as Record<string, unknown>;
for (const [name, path, dflt] of PLAIN_GETTERS)
  proto[name] = function (this: SettingsManager) {
    return this.get(path) ?? dflt;
  };
for (const [name, path, allowed, dflt] of CHOICE_GETTERS)
  proto[name] = function (this: SettingsManager) {
    const v = this.get(path);
    return allowed.includes(v) ? v : dflt;
  };
for (const [name, path] of LIST_GETTERS)
  proto[name] = function (this: SettingsManager) {
    return [...((this.get(path) as unknown[] | undefined) ?? [])];
  };
for (const [name, path, transform] of SETTERS) {
  const [key, nested] = path.split(".") as [string, string | undefined];
  proto[name] = function (this: SettingsManager, value: unknown) {
    this.set(key, transform ? transform(value as never) : value, nested);
  };
}
