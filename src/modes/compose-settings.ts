/**
 * Settings that change how start-up wires things, kept out of compose.ts: reading them (again
 * on `ctx.reload()` and a session change), the user's `httpProxy`, `images.blockImages`, `packages`, the bash shell,
 * and what `--verbose` says about where settings came from.
 */
import { existsSync } from "node:fs";
import { loadSettings, loadUserSettings, type Settings } from "../config.ts";
import { blockImages } from "../providers/block-images.ts";
import type { StreamFn } from "../providers/types.ts";
import type { LocalShell } from "../tools/index.ts";
import { expandHome } from "../util/home-path.ts";
import { log } from "../util/log.ts";
import type { CliOptions } from "./compose.ts";

/**
 * The user's `httpProxy` as `HTTP_PROXY` / `HTTPS_PROXY` of `env` (pion's process environment,
 * which Bun's fetch and so every provider SDK reads per request); a variable already set (not
 * empty) wins.
 * Only the user's settings count: loadSettings drops a project's value.
 */
export function applyHttpProxy(user: Settings, env: Record<string, string | undefined>): void {
  const proxy = user.httpProxy?.trim();
  if (!proxy) return;
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY"]) if (!env[name]) env[name] = proxy;
}

/** The stream, with images kept from the model when `images.blockImages` is set. */
export const imagePolicy = (stream: StreamFn, settings: () => Settings): StreamFn => {
  const blocked = blockImages(stream);
  // Asked at each request: a ctx.reload() or a session change may turn it on or off.
  return (req, signal) => (settings().images?.blockImages === true ? blocked : stream)(req, signal);
};

/** The bash tool's and host shell's program (a leading `~` expanded) and command prefix. */
export function localShell(settings: Settings): LocalShell {
  const raw = settings.shellPath?.trim();
  const path = raw ? expandHome(raw) : undefined;
  return { ...(path ? { path } : {}), ...(settings.shellCommandPrefix ? { commandPrefix: settings.shellCommandPrefix } : {}) };
}

/** `--verbose` lines: the folders read and, per setting, the file its value came from. */
export function settingsReport(settings: Settings, folders: { user: readonly string[]; project: readonly string[] }): string[] {
  const read = [...folders.user, ...folders.project].filter((dir) => existsSync(dir));
  const lines = [`config folders: ${read.join(", ") || "none"}`];
  for (const [key, file] of Object.entries(settings.settingSources ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`settings: ${key} from ${file}`);
  return lines;
}

/**
 * Settings with the listed packages' resources (the mechanism is src/extensions/package-manager.ts,
 * loaded only when settings list a package).
 */
export async function withPackageResources(settings: Settings, env: Record<string, string | undefined> = process.env): Promise<Settings> {
  if (!settings.listedPackages?.length || !settings.listedResources) return settings;
  return (await import("../extensions/package-manager.ts")).withPackageResources(settings, env);
}

/**
 * The session's settings: the user's, and the project's when `trusted` (decided once, at start-up),
 * with the listed packages' resources. Read at start-up (`user` read already, for the trust
 * decision) and again by `ctx.reload()` and on a session change.
 */
export async function readSettings(o: Pick<CliOptions, "home" | "cwd" | "env">, trusted: boolean, user: Settings = loadUserSettings(o.home, o.env)): Promise<Settings> {
  return withPackageResources(loadSettings(o.home, o.cwd, trusted, (msg) => log("settings", msg), user), o.env);
}
