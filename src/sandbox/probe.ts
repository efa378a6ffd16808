import { accessSync, constants } from "node:fs";
import { isAbsolute, join, relative } from "node:path";

export type Probe = { ok: true; bwrap: string; version: string } | { ok: false; why: string; remedy: string };

const MIN_VERSION = [0, 8, 0];

/**
 * bwrap to run: `configured` (settings `sandbox.bwrapPath`), else the first on PATH. A PATH
 * entry that is relative or inside the cwd is skipped: a checkout must not supply the program
 * that is to contain it.
 */
export function findBwrap(configured: string | undefined, cwd: string, path = process.env.PATH ?? ""): string | undefined {
  if (configured) return executable(configured) ? configured : undefined;
  for (const dir of path.split(":")) {
    if (!dir || !isAbsolute(dir) || !relative(cwd, dir).startsWith("..")) continue;
    const file = join(dir, "bwrap");
    if (executable(file)) return file;
  }
  return undefined;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `bubblewrap 0.8.0` → at least MIN_VERSION? */
export function versionOk(text: string): { ok: boolean; version: string } {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return { ok: false, version: text.trim() || "unknown" };
  const v = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  for (let i = 0; i < 3; i++) if (v[i] !== MIN_VERSION[i]) return { ok: v[i]! > MIN_VERSION[i]!, version: m[0] };
  return { ok: true, version: m[0] };
}

/** Why a sandbox that did not start failed, and what to do, from what bwrap printed. */
export function explainFailure(stderr: string): { why: string; remedy: string } {
  const said = stderr.trim().split("\n").slice(-3).join(" ").slice(0, 300) || "bwrap exited without a message";
  if (/setting up uid map|apparmor/i.test(stderr)) {
    return {
      why: `bwrap could not set up its user namespace (${said})`,
      remedy: "on Ubuntu 23.10 and later AppArmor restricts unprivileged user namespaces: load a profile that allows bwrap (Ubuntu ships /etc/apparmor.d/bwrap-userns-restrict), or set kernel.apparmor_restrict_unprivileged_userns=0",
    };
  }
  if (/namespace|Operation not permitted|No permissions|clone|unshare/i.test(stderr)) {
    return {
      why: `bwrap could not create its namespaces (${said}); user namespaces are disabled here, as in most containers`,
      remedy: "allow user namespaces (sysctl kernel.unprivileged_userns_clone=1, or a container run with a seccomp profile that permits them), or run pion with --sandbox off inside an isolated container",
    };
  }
  if (/seccomp/i.test(stderr)) return { why: `bwrap could not load the seccomp filter (${said})`, remedy: "install libseccomp2 and a kernel with seccomp filters" };
  return { why: `bwrap failed to start a sandbox (${said})`, remedy: "run `pion sandbox check` for details, or --sandbox off inside an isolated container" };
}

export const NOT_INSTALLED = {
  why: "bubblewrap (bwrap) is not installed, or not on PATH outside the working folder",
  remedy: "install it (Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add bubblewrap), or set sandbox.bwrapPath",
};

export const TOO_OLD = (version: string) => ({
  why: `bwrap ${version} is older than ${MIN_VERSION.join(".")}`,
  remedy: "install bubblewrap 0.8 or later",
});
