/**
 * Settings that change how start-up wires things, kept out of compose.ts: the user's
 * `httpProxy`, `images.blockImages`, `packages`, the bash shell, and what `--verbose` says
 * about where settings came from.
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { isDir } from "../util/fs-kind.ts";
import type { Settings } from "../config.ts";
import { blockImages } from "../providers/block-images.ts";
import type { StreamFn } from "../providers/types.ts";
import type { LocalShell } from "../tools/index.ts";
import { expandHome } from "../util/home-path.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { dedupePackages, RESOURCE_KINDS, resourcesOf } from "../extensions/packages.ts";

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
export const imagePolicy = (stream: StreamFn, settings: Settings): StreamFn => (settings.images?.blockImages === true ? blockImages(stream) : stream);

/** The bash tool's and host shell's program (a leading `~` expanded) and command prefix. */
export function localShell(settings: Settings): LocalShell {
  const raw = settings.shellPath?.trim();
  const path = raw ? expandHome(raw) : undefined;
  return { ...(path ? { path } : {}), ...(settings.shellCommandPrefix ? { commandPrefix: settings.shellCommandPrefix } : {}) };
}

/**
 * The settings with their `packages` (src/extensions/packages.ts) added to the resource lists:
 * each package's extensions, skills and prompts join the `extensions`, `skills` and `prompts`
 * entries of the settings file that listed it, so they load, and obey `!`/`-` overrides, as
 * listed paths do. An npm or git package that is not installed yet is installed first, as the
 * reference does at start-up (not with PI_OFFLINE=1); one that cannot be is said on stderr and skipped.
 */
export async function withPackageResources(settings: Settings, env: Record<string, string | undefined> = process.env): Promise<Settings> {
  const listed = settings.listedPackages ?? [];
  if (listed.length === 0 || !settings.listedResources) return settings;
  const packages = dedupePackages(listed);
  const missing = packages.filter((p) => p.parsed.type !== "local" && !existsSync(p.root));
  if (missing.length > 0 && env.PI_OFFLINE !== "1") {
    const { installListedPackage } = await import("./package-install.ts");
    for (const p of missing) {
      log("packages", `installing ${p.source}...`);
      await installListedPackage({ env }, p).catch((err: unknown) => log("packages", `${p.source}: ${errorMessage(err)}`));
    }
  }
  const found = resourcesOf(packages, (msg) => log("packages", msg));
  const lists = { ...settings.listedResources };
  for (const kind of RESOURCE_KINDS) {
    const added = found[kind].map((path) => {
      const pkg = found.byPackage.get(path)!;
      return { entry: path, base: pkg.base, level: pkg.level, package: { source: pkg.source, root: isDir(pkg.root) ? pkg.root : dirname(pkg.root) } };
    });
    lists[kind] = [...lists[kind], ...added];
  }
  return { ...settings, listedResources: lists };
}

/** `--verbose` lines: the folders read and, per setting, the file its value came from. */
export function settingsReport(settings: Settings, folders: { user: readonly string[]; project: readonly string[] }): string[] {
  const read = [...folders.user, ...folders.project].filter((dir) => existsSync(dir));
  const lines = [`config folders: ${read.join(", ") || "none"}`];
  for (const [key, file] of Object.entries(settings.settingSources ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) lines.push(`settings: ${key} from ${file}`);
  return lines;
}
