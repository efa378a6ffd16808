import { homedir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import pkg from "../package.json" with { type: "json" };
import { filesIn, userConfigDirs } from "./config-dirs.ts";
import { projectPaths } from "./resources/project-paths.ts";
import { emptyMerge, mergeSettingsFile, RESOURCE_LIST_KEYS, type ListedEntry, type MergedSettings, type ResourceListKey } from "./settings-files.ts";
import type { ShellEnvSettings } from "./credentials/child-env.ts";
import { describeIssues } from "./util/issues.ts";
import { readJsonFile } from "./util/json-file.ts";
import { log } from "./util/log.ts";

declare const PION_COMMIT: string | undefined;
declare const PION_TARGET: string | undefined;
export const VERSION = `${pkg.version}+${typeof PION_COMMIT === "string" ? PION_COMMIT : "dev"}`;
/** The release target the binary was built for (`linux-arm64`, `linux-x64-musl`, ...; build.ts injects it); from source, the running platform. */
export const TARGET =
  typeof PION_TARGET === "string" ? PION_TARGET : `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;

/** `PION_HOME`, else the reference's `PI_CODING_AGENT_DIR` (its config folder has the same layout), else ~/.pion. */
export const pionHome = (env: Record<string, string | undefined> = process.env): string =>
  env.PION_HOME || env.PI_CODING_AGENT_DIR || join(homedir(), ".pion");

/** Keys of the reference's settings.json that pion honours (README: "Coming from the reference"). */
/** The settings schema, built on first use: a start-up without a settings file never pays for it. */
function makeSettingsSchema() {
  const ReferenceKeys = {
    enabledModels: v.optional(v.array(v.string())),
    modelThinkingLevels: v.optional(v.record(v.string(), v.picklist(["off", "minimal", "low", "medium", "high", "xhigh", "max"]))),
    sessionDir: v.optional(v.string()),
    shellPath: v.optional(v.string()),
    shellCommandPrefix: v.optional(v.string()),
    images: v.optional(v.looseObject({ autoResize: v.optional(v.boolean()), blockImages: v.optional(v.boolean()) })),
    extensions: v.optional(v.array(v.string())),
    skills: v.optional(v.array(v.string())),
    prompts: v.optional(v.array(v.string())),
    packages: v.optional(v.array(v.unknown())),
    /** Honoured in the user's settings only. */
    httpProxy: v.optional(v.string()),
  };

  return v.looseObject({
    ...ReferenceKeys,
    defaultProvider: v.optional(v.string()),
    defaultModel: v.optional(v.string()),
    defaultThinkingLevel: v.optional(v.picklist(["off", "minimal", "low", "medium", "high", "xhigh", "max"])),
    steeringMode: v.optional(v.picklist(["all", "one-at-a-time"])),
    followUpMode: v.optional(v.picklist(["all", "one-at-a-time"])),
    interruptMode: v.optional(v.picklist(["immediate", "wait"])),
    defaultTools: v.optional(v.union([v.string(), v.array(v.string())])),
    httpIdleTimeoutMs: v.optional(v.number()),
    thinkingBudgets: v.optional(v.looseObject({ minimal: v.optional(v.number()), low: v.optional(v.number()), medium: v.optional(v.number()), high: v.optional(v.number()) })),
    /** Honoured in PION_HOME's settings only: a project cannot decide whether it is trusted. */
    defaultProjectTrust: v.optional(v.picklist(["ask", "always", "never"])),
    shellEnv: v.optional(
      v.looseObject({
        include: v.optional(v.array(v.string())),
        exclude: v.optional(v.array(v.string())),
        inherit: v.optional(v.picklist(["all", "core"])),
      }),
    ),
    /** Where `pion models refresh` downloads the catalog from (models.dev's format). */
    modelCatalogUrl: v.optional(v.string()),
    retry: v.optional(
      v.looseObject({
        enabled: v.optional(v.boolean()),
        maxRetries: v.optional(v.number()),
        baseDelayMs: v.optional(v.number()),
        /** The longest wait before a retry (default one minute). */
        maxAgentDelayMs: v.optional(v.number()),
      }),
    ),
    compaction: v.optional(
      v.looseObject({
        enabled: v.optional(v.boolean()),
        reserveTokens: v.optional(v.number()),
        keepRecentTokens: v.optional(v.number()),
      }),
    ),
    permissions: v.optional(
      v.looseObject({
        mode: v.optional(v.picklist(["auto", "ask", "read-only"])),
        allow: v.optional(v.array(v.string())),
        ask: v.optional(v.array(v.string())),
        deny: v.optional(v.array(v.string())),
        timeoutMs: v.optional(v.pipe(v.number(), v.minValue(0))),
      }),
    ),
    sandbox: v.optional(
      v.looseObject({
        mode: v.optional(v.picklist(["off", "read-only", "workspace-write"])),
        writableRoots: v.optional(v.array(v.string())),
        network: v.optional(v.boolean()),
        bwrapPath: v.optional(v.string()),
      }),
    ),
    limits: v.optional(
      v.looseObject({
        maxTurns: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
        maxCostUsd: v.optional(v.pipe(v.number(), v.gtValue(0))),
      }),
    ),
  });
}
let settingsSchema: ReturnType<typeof makeSettingsSchema> | undefined;
export type Settings = v.InferOutput<ReturnType<typeof makeSettingsSchema>> & {
  /** The project's `permissions.deny` rules: the only permissions a project's settings may set. */
  projectDeny?: string[];
  /** The project's `sandbox` settings: they may only narrow the user's (src/sandbox/config.ts). */
  projectSandbox?: { mode?: "off" | "read-only" | "workspace-write"; network?: boolean };
  /** Top-level key → the settings file its value came from (for --verbose). */
  settingSources?: Record<string, string>;
  /** The `extensions`, `skills` and `prompts` lists of every file read, combined, each entry with its base folder. */
  listedResources?: Record<ResourceListKey, ListedEntry[]>;
  /** The `packages` entries of every file read, each with its settings folder (a project's only when trusted). */
  listedPackages?: MergedSettings["packages"];
};

function readSettingsFile(path: string): Settings {
  const raw = readJsonFile(path);
  if (raw === undefined) return {};
  const parsed = v.safeParse((settingsSchema ??= makeSettingsSchema()), raw);
  if (!parsed.success) throw new Error(`Invalid settings in ${path}: ${describeIssues(parsed.issues)}`);
  return parsed.output;
}

/** The merged files as Settings: the values, plus where each came from and the combined resource lists. */
const asSettings = (m: MergedSettings): Settings => ({ ...m.values, settingSources: m.sources, listedResources: m.lists, listedPackages: m.packages }) as Settings;

/**
 * The user's settings: the reference's `~/.pi/agent/settings.json`, then `$PION_HOME/settings.json`
 * over it (config-dirs.ts). What decides project trust, before any project file is read.
 */
export function loadUserSettings(home: string, env: Record<string, string | undefined> = process.env): Settings {
  const merged = emptyMerge();
  for (const file of filesIn(userConfigDirs(home, env), "settings.json")) mergeSettingsFile(merged, file, readSettingsFile(file));
  return asSettings(merged);
}

/** Keys only the user's own settings may set: a project cannot decide its own trust or where pion's requests go. */
const USER_ONLY_KEYS = ["defaultProjectTrust", "httpProxy"] as const;

/**
 * User settings, overridden key by key (nested objects merged) by the project's `.pi/settings.json`
 * and then `.pion/settings.json` when the folder is trusted; resource lists are combined. The
 * project's `defaultProjectTrust` and `httpProxy` are dropped (with a note on stderr).
 */
export function loadSettings(
  home: string,
  cwd: string,
  projectTrusted: boolean,
  warn: (msg: string) => void = () => {},
  /** The user's settings when the caller has read them already (the trust decision needs them first). */
  user: Settings = loadUserSettings(home),
): Settings {
  if (!projectTrusted) return user;
  const files = emptyMerge();
  for (const file of projectPaths(cwd).settings) {
    const own: Record<string, unknown> = { ...readSettingsFile(file) };
    for (const key of USER_ONLY_KEYS) {
      if (own[key] === undefined) continue;
      warn(`ignoring ${key} in ${file}: only the user's settings can set it`);
      delete own[key];
    }
    mergeSettingsFile(files, file, own, "project");
  }
  const project = files.values as Settings;
  const merged: Record<string, unknown> = { ...user };
  for (const [k, val] of Object.entries(project)) {
    if (k === "permissions" || k === "sandbox") continue;
    const prev = merged[k];
    merged[k] =
      val && typeof val === "object" && !Array.isArray(val) && prev && typeof prev === "object" && !Array.isArray(prev)
        ? { ...prev, ...val }
        : val;
  }
  merged.settingSources = { ...user.settingSources, ...files.sources };
  const lists = user.listedResources ?? emptyMerge().lists;
  merged.listedResources = Object.fromEntries(RESOURCE_LIST_KEYS.map((k) => [k, [...lists[k], ...files.lists[k]]]));
  merged.listedPackages = [...(user.listedPackages ?? []), ...files.packages];
  const shellEnv = projectShellEnv(user.shellEnv, project.shellEnv);
  if (shellEnv) merged.shellEnv = shellEnv;
  // A folder may tighten what runs, never loosen it: only its deny rules count.
  const own = project.permissions;
  if (own) {
    const ignored = Object.keys(own).filter((key) => key !== "deny");
    if (ignored.length > 0) warn(`the project's settings may only add permissions.deny rules; ignored: permissions.${ignored.join(", permissions.")}`);
    if (own.deny?.length) (merged as Settings).projectDeny = own.deny;
  }
  // The sandbox likewise: a stricter mode or the network off; never writable folders or a bwrap of the project's.
  if (project.sandbox) {
    const { mode, network, ...rest } = project.sandbox;
    if (Object.keys(rest).length > 0) warn(`the project's settings may only narrow the sandbox; ignored: sandbox.${Object.keys(rest).join(", sandbox.")}`);
    (merged as Settings).projectSandbox = { ...(mode ? { mode } : {}), ...(network === false ? { network } : {}) };
  }
  return merged as Settings;
}

const envValue = (env: Record<string, string | undefined>, name: string) => (env[name] === "" ? undefined : env[name]);

/** A process setting named both ways: pion's `PION_*` name wins over the reference's `PI_*` one. */
export const envSetting = (env: Record<string, string | undefined>, pion: string, pi: string): string | undefined =>
  envValue(env, pion) ?? envValue(env, pi);

/** `--offline`, or `PION_OFFLINE` / `PI_OFFLINE` set to 1, true or yes. */
export const isOffline = (flag: boolean, env: Record<string, string | undefined>): boolean =>
  flag || /^(1|true|yes)$/i.test(envSetting(env, "PION_OFFLINE", "PI_OFFLINE") ?? "");

/** The sessions directory when no `--session-dir` is given: `PION_SESSION_DIR`, else `PI_CODING_AGENT_SESSION_DIR`. */
export const sessionDirFromEnv = (env: Record<string, string | undefined>): string | undefined =>
  envSetting(env, "PION_SESSION_DIR", "PI_CODING_AGENT_SESSION_DIR");

/**
 * A project may only tighten `shellEnv`: its `exclude` adds to the user's and its
 * `inherit: "core"` applies, but its `include` is ignored (a checked-out folder must not
 * hand the user's credentials to the commands it runs).
 */
function projectShellEnv(user: ShellEnvSettings | undefined, project: ShellEnvSettings | undefined): ShellEnvSettings | undefined {
  if (!project) return user;
  if (project.include?.length) log("settings", "ignoring shellEnv.include from the project's settings: only the user's settings may pass credentials to commands");
  const out: ShellEnvSettings = { ...user };
  if (project.exclude?.length) out.exclude = [...(user?.exclude ?? []), ...project.exclude];
  if (project.inherit === "core") out.inherit = "core";
  return out;
}
