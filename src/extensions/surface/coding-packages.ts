/**
 * The reference's `DefaultPackageManager` over pion's package mechanism
 * (src/extensions/package-manager.ts): a source is installed into, written into the `packages`
 * of, and removed from the user's settings folder (`agentDir`) or, with `local`, the project's
 * (`<cwd>/.pion`, pion's project settings folder, where the reference uses `.pi`). Settings are
 * read and written through the `settingsManager` given, as the reference does. npm and git run
 * with their output captured and never prompt (the reference's `commandOutput: "capture"`),
 * whatever `commandOutput` says. What needs the npm registry's metadata or `-e`'s temporary
 * folder (`checkForAvailableUpdates`, `resolveExtensionSources` with `temporary`) throws.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { installedPathOf, installSource, settingsEntryFor, uninstallSource, withPackageEntry, withoutPackageEntry } from "../package-manager.ts";
import { installGitPackage, installNpmPackage, updateGitCheckout } from "../package-install.ts";
import { gitPackageDir, gitRoot } from "../git-source.ts";
import { entrySource, packageIdentity, parseSource, type PackageSource } from "../packages.ts";
import { errorMessage } from "../../util/errors.ts";
import { expandHome } from "../../util/home-path.ts";
import { isDir } from "../../util/fs-kind.ts";
import { ancestorAgentsSkillDirs, Found, type PathMetadata, type ResolvedPaths } from "./coding-packages-resolve.ts";

type Obj = Record<string, unknown>;
type SettingsScope = "user" | "project";
type Action = "install" | "remove" | "update" | "clone" | "pull";
export interface ProgressEvent {
  type: "start" | "progress" | "complete" | "error" | "result";
  action: Action;
  source: string;
  message?: string;
}
export type MissingSourceAction = "install" | "skip" | "error";

/** What the manager needs of a settings manager (pion's SettingsManager, or the reference's). */
interface PackageSettings {
  getGlobalSettings(): Obj;
  getProjectSettings(): Obj;
  setPackages(packages: unknown[]): void;
  setProjectPackages(packages: unknown[]): void;
  isProjectTrusted?(): boolean;
}

export interface PackageManagerOptions {
  cwd: string;
  agentDir: string;
  settingsManager: PackageSettings;
  commandOutput?: "inherit" | "capture";
  builtinExtensions?: string[];
}

const unavailable = (method: string, why: string): Error => new Error(`DefaultPackageManager.${method} is not available in pion: ${why}`);
const packagesOf = (settings: Obj): unknown[] => (Array.isArray(settings.packages) ? [...settings.packages] : []);
const isPinned = (p: PackageSource): boolean => p.type === "npm" && p.version !== undefined && /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(p.version);

export class DefaultPackageManager {
  readonly #cwd: string;
  readonly #agentDir: string;
  readonly #settings: PackageSettings;
  #progress: ((event: ProgressEvent) => void) | undefined;

  constructor(options: PackageManagerOptions) {
    this.#cwd = resolve(expandHome(options.cwd));
    this.#agentDir = resolve(expandHome(options.agentDir));
    this.#settings = options.settingsManager;
  }

  setProgressCallback(callback: ((event: ProgressEvent) => void) | undefined): void {
    this.#progress = callback;
  }

  #scope(options?: { local?: boolean }): SettingsScope {
    return options?.local ? "project" : "user";
  }

  #dir(scope: SettingsScope): string {
    if (scope === "user") return this.#agentDir;
    if (this.#settings.isProjectTrusted?.() === false) throw new Error("Project is not trusted; refusing to access project package storage");
    return join(this.#cwd, ".pion");
  }

  #packages(scope: SettingsScope): unknown[] {
    return packagesOf(scope === "project" ? this.#settings.getProjectSettings() : this.#settings.getGlobalSettings());
  }

  #write(scope: SettingsScope, packages: unknown[]): void {
    if (scope === "project") this.#settings.setProjectPackages(packages);
    else this.#settings.setPackages(packages);
  }

  #env(): Record<string, string | undefined> {
    return process.env;
  }

  async #withProgress(action: Action, source: string, message: string, run: () => Promise<void>): Promise<void> {
    this.#progress?.({ type: "start", action, source, message });
    try {
      await run();
      this.#progress?.({ type: "complete", action, source });
    } catch (err) {
      this.#progress?.({ type: "error", action, source, message: errorMessage(err) });
      throw err;
    }
  }

  addSourceToSettings(source: string, options?: { local?: boolean }): boolean {
    const scope = this.#scope(options);
    const dir = this.#dir(scope);
    const next = withPackageEntry(this.#packages(scope), settingsEntryFor(source, dir, this.#cwd), dir);
    if (!next) return false;
    this.#write(scope, next);
    return true;
  }

  removeSourceFromSettings(source: string, options?: { local?: boolean }): boolean {
    const scope = this.#scope(options);
    const dir = this.#dir(scope);
    const current = this.#packages(scope);
    const next = withoutPackageEntry(current, settingsEntryFor(source, dir, this.#cwd), dir);
    if (next.length === current.length) return false;
    this.#write(scope, next);
    return true;
  }

  /** Where a source of the scope is installed (a local one: where it points from the scope's settings folder), when it is there. */
  getInstalledPath(source: string, scope: SettingsScope): string | undefined {
    const dir = this.#dir(scope);
    const path = installedPathOf(parseSource(source), dir, dir);
    return existsSync(path) ? path : undefined;
  }

  listConfiguredPackages(): { source: string; scope: SettingsScope; filtered: boolean; installedPath?: string }[] {
    const out = [];
    for (const scope of ["user", "project"] as const) {
      for (const entry of this.#packages(scope)) {
        const source = entrySource(entry);
        if (source === undefined) continue;
        out.push({ source, scope, filtered: typeof entry === "object", installedPath: this.getInstalledPath(source, scope) });
      }
    }
    return out;
  }

  async install(source: string, options?: { local?: boolean }): Promise<void> {
    const dir = this.#dir(this.#scope(options));
    await this.#withProgress("install", source, `Installing ${source}...`, () => installSource({ env: this.#env() }, source, dir, this.#cwd));
  }

  async installAndPersist(source: string, options?: { local?: boolean }): Promise<void> {
    await this.install(source, options);
    this.addSourceToSettings(source, options);
  }

  async remove(source: string, options?: { local?: boolean }): Promise<void> {
    const dir = this.#dir(this.#scope(options));
    await this.#withProgress("remove", source, `Removing ${source}...`, () => uninstallSource({ env: this.#env() }, source, dir));
  }

  async removeAndPersist(source: string, options?: { local?: boolean }): Promise<boolean> {
    await this.remove(source, options);
    return this.removeSourceFromSettings(source, options);
  }

  /**
   * Bring the configured git checkouts to their refs' newest commits and reinstall unpinned npm
   * sources at their newest version (`name@latest`, or the configured range), all of them or the
   * one package `source` names; nothing with PI_OFFLINE=1. A changed checkout is reported as a
   * `result` event `<source> <old> -> <new>`.
   */
  async update(source?: string): Promise<void> {
    const identity = (s: string, scope: SettingsScope) => packageIdentity(parseSource(s), this.#dir(scope));
    const wanted = source === undefined ? undefined : packageIdentity(parseSource(source), this.#cwd);
    const targets: { source: string; scope: SettingsScope }[] = [];
    const configured: string[] = [];
    for (const scope of ["user", "project"] as const) {
      for (const entry of this.#packages(scope)) {
        const s = entrySource(entry);
        if (s === undefined) continue;
        configured.push(s);
        if (wanted === undefined || identity(s, scope) === wanted) targets.push({ source: s, scope });
      }
    }
    if (source !== undefined && targets.length === 0) throw new Error(noMatch(source, configured));
    if (this.#env().PI_OFFLINE === "1") return;
    const o = { env: this.#env() };
    for (const { source: s, scope } of targets) {
      const parsed = parseSource(s);
      const dir = this.#dir(scope);
      if (parsed.type === "npm" && !isPinned(parsed)) {
        await this.#withProgress("update", s, `Updating ${s}...`, () => installNpmPackage(o, parsed.version ? parsed.spec : `${parsed.name}@latest`, dir));
      } else if (parsed.type === "git") {
        const checkout = gitPackageDir(dir, parsed);
        const head = () => (existsSync(checkout) ? Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: checkout }).stdout.toString().trim() || undefined : undefined);
        const from = head();
        await this.#withProgress("update", s, `Updating ${s}...`, () =>
          existsSync(checkout) ? updateGitCheckout(o, parsed, checkout) : installGitPackage(o, parsed, checkout, gitRoot(dir)),
        );
        const to = head();
        const short = (v?: string) => (v === undefined ? "(none)" : v.slice(0, 7));
        if (from !== to) this.#progress?.({ type: "result", action: "update", source: s, message: `${s}${scope === "project" ? " (project)" : ""} ${short(from)} -> ${short(to)}` });
      }
    }
  }

  async checkForAvailableUpdates(): Promise<never> {
    throw unavailable("checkForAvailableUpdates", "pion does not query the npm registry or remote git heads for newer versions; call update() instead");
  }

  /**
   * Every resource the settings offer: the packages of both scopes (one per package, the
   * project's entry winning; a missing npm or git one installed first unless PI_OFFLINE=1 or
   * `onMissing` says otherwise, a failure reported in `installFailures`), then each scope's
   * top-level list entries and conventional folders.
   */
  async resolve(onMissing?: (source: string) => Promise<MissingSourceAction>): Promise<ResolvedPaths> {
    const found = new Found();
    const global = this.#settings.getGlobalSettings();
    const trusted = this.#settings.isProjectTrusted?.() !== false;
    const project = trusted ? this.#settings.getProjectSettings() : {};
    const listed = [...packagesOf(project).map((entry) => ({ entry, scope: "project" as const })), ...packagesOf(global).map((entry) => ({ entry, scope: "user" as const }))];
    const installFailures = await this.#resolvePackages(dedupe(listed, (s, scope) => packageIdentity(parseSource(s), this.#dir(scope))), found, onMissing);
    const home = homedir();
    const projectDir = join(this.#cwd, ".pion");
    const userAgents = join(home, ".agents", "skills");
    if (trusted) {
      const agents = ancestorAgentsSkillDirs(this.#cwd).filter((d) => d !== userAgents);
      found.addTopLevel(project, "project", projectDir, { extensions: [join(projectDir, "extensions")], skills: [join(projectDir, "skills"), ...agents], prompts: [join(projectDir, "prompts")] });
    }
    const user = this.#agentDir;
    found.addTopLevel(global, "user", user, { extensions: [join(user, "extensions")], skills: [join(user, "skills"), userAgents], prompts: [join(user, "prompts")] });
    return { ...found.result(), installFailures };
  }

  /** `sources` resolved as packages of the user's (or, with `local`, the project's) scope; `temporary` (`-e`) is not available. */
  async resolveExtensionSources(sources: string[], options?: { local?: boolean; temporary?: boolean }): Promise<ResolvedPaths> {
    if (options?.temporary) throw unavailable("resolveExtensionSources", "temporary (-e) sources are installed by pion's command line, not through the package manager");
    const scope = this.#scope(options);
    const found = new Found();
    const installFailures = await this.#resolvePackages(sources.filter((s) => !s.startsWith("builtin:")).map((entry) => ({ entry, scope })), found);
    return { ...found.result(), installFailures };
  }

  async #resolvePackages(listed: { entry: unknown; scope: SettingsScope }[], found: Found, onMissing?: (source: string) => Promise<MissingSourceAction>) {
    const failures: { source: string; scope: SettingsScope; message: string }[] = [];
    for (const { entry, scope } of listed) {
      const source = entrySource(entry);
      if (source === undefined) continue;
      const parsed = parseSource(source);
      const dir = this.#dir(scope);
      const path = installedPathOf(parsed, dir, dir);
      const metadata: PathMetadata = { source, scope, origin: "package" };
      if (parsed.type === "local") {
        if (!existsSync(path)) continue;
        if (!isDir(path)) found.add("extensions", path, true, { ...metadata, baseDir: dirname(path) });
        else found.addPackage(path, typeof entry === "object" ? entry : undefined, { ...metadata, baseDir: path, packageRoot: path });
        continue;
      }
      if (!existsSync(path)) {
        if (this.#env().PI_OFFLINE === "1") continue;
        const action = onMissing ? await onMissing(source) : "install";
        if (action === "skip") continue;
        if (action === "error") throw new Error(`Missing source: ${source}`);
        try {
          await this.#withProgress("install", source, `Installing ${source}...`, () => installSource({ env: this.#env() }, source, dir, this.#cwd));
        } catch (err) {
          failures.push({ source, scope, message: errorMessage(err) });
          continue;
        }
      }
      found.addPackage(path, typeof entry === "object" ? entry : undefined, { ...metadata, baseDir: path, packageRoot: path });
    }
    return failures;
  }
}

/** One entry per package, in listing order: a project entry replaces the user's entry for the same package. */
function dedupe<T extends { entry: unknown; scope: SettingsScope }>(listed: T[], identity: (source: string, scope: SettingsScope) => string): T[] {
  const out: T[] = [];
  const at = new Map<string, number>();
  for (const item of listed) {
    const source = entrySource(item.entry);
    if (source === undefined) continue;
    const id = identity(source, item.scope);
    const i = at.get(id);
    if (i === undefined) {
      at.set(id, out.length);
      out.push(item);
    } else if (item.scope === "project" && out[i]!.scope !== "project") out[i] = item;
  }
  return out;
}

/** The reference's message for an update of a package no settings list, with the configured source it may have meant. */
function noMatch(source: string, configured: string[]): string {
  const s = source.trim();
  const meant = configured.find((c) => {
    const p = parseSource(c);
    if (p.type === "npm") return s === p.name || s === p.spec;
    if (p.type === "git") return s === `${p.host}/${p.path}` || (p.ref !== undefined && s === `${p.host}/${p.path}@${p.ref}`);
    return false;
  });
  return meant ? `No matching package found for ${source}. Did you mean ${meant}?` : `No matching package found for ${source}`;
}

/** The names this module adds to `@earendil-works/pi-coding-agent`. */
export const codingPackages = { DefaultPackageManager };
