import { existsSync, lstatSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { SandboxPolicy } from "./config.ts";

/** Folders under the user's home that hold credentials: empty inside the sandbox. */
const HIDDEN_DIRS = [".ssh", ".aws", ".config/gh", ".docker", ".gnupg", ".kube", ".config/gcloud", ".azure", ".pi/agent"];
/** Files under the user's home that hold credentials: empty inside the sandbox. */
const HIDDEN_FILES = [".netrc", ".git-credentials", ".npmrc", ".pypirc"];
/** Inside a writable folder, what stays read-only: what runs later outside the sandbox, and pion's own configuration. */
const KEPT_READ_ONLY = [".git/hooks", ".git/config", ".gitmodules", ".pion", ".pi"];

/** What a policy hides and keeps read-only, resolved against the disk as it is now. */
export interface Protected {
  hiddenDirs: string[];
  hiddenFiles: string[];
  /** Existing paths kept read-only. */
  readOnly: string[];
  /** Folders kept read-only that do not exist yet: an empty read-only folder is mounted there, so nothing can be put in them. */
  sealed: string[];
  /** Every path kept read-only, existing or not (what the file tools refuse to write). */
  kept: string[];
}

/** Of KEPT_READ_ONLY, the folders sealed when missing (`.git/hooks` only in a git checkout). */
const SEALED_WHEN_MISSING = [".pion", ".pi", ".git/hooks"];

export function protectedPaths(p: SandboxPolicy): Protected {
  const hiddenDirs = [...new Set([p.pionHome, ...(p.configDirs ?? []), ...HIDDEN_DIRS.map((d) => join(p.userHome, d))])].filter(isDir);
  const hiddenFiles = HIDDEN_FILES.map((f) => join(p.userHome, f)).filter(exists);
  const readOnly: string[] = [];
  const sealed: string[] = [];
  const kept: string[] = [];
  for (const root of p.writable) {
    for (const rel of KEPT_READ_ONLY) {
      const path = join(root, rel);
      kept.push(path);
      if (exists(path)) readOnly.push(path);
      else if (SEALED_WHEN_MISSING.includes(rel) && isDir(dirname(path))) sealed.push(path);
    }
    // A worktree's `.git` is a file naming its real git folder: the hooks and config that count are there.
    const gitdir = worktreeGitDir(root);
    if (gitdir) {
      const common = commonDir(gitdir);
      for (const path of [join(common, "hooks"), join(common, "config"), join(gitdir, "config")]) {
        kept.push(path);
        if (exists(path)) readOnly.push(path);
      }
    }
  }
  return { hiddenDirs, hiddenFiles, readOnly, sealed, kept };
}

/**
 * bwrap's arguments for one command, up to (not including) the command itself: the whole file
 * system read-only, the writable folders bound writable (a worktree's real git folder too, so
 * commits work), the protected paths bound over them, a private `/tmp` (the session's folder
 * `tmp`), new PID, IPC, UTS and (unless the network is on) network namespaces, no capabilities,
 * and the seccomp program read from descriptor `seccompFd`.
 */
export function bwrapArgs(p: SandboxPolicy, tmp: string, seccompFd: number): string[] {
  // The private /tmp first: a writable folder under /tmp (a checkout there) is bound on top of it.
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", tmp, "/tmp"];
  for (const root of p.writable) {
    args.push("--bind", root, root);
    const gitdir = worktreeGitDir(root);
    if (gitdir) {
      const common = commonDir(gitdir);
      for (const dir of new Set([gitdir, common])) args.push("--bind", dir, dir);
    }
  }
  const prot = protectedPaths(p);
  for (const path of prot.readOnly) args.push("--ro-bind", path, path);
  for (const dir of prot.sealed) args.push("--tmpfs", dir, "--remount-ro", dir);
  for (const dir of prot.hiddenDirs) args.push("--tmpfs", dir, "--remount-ro", dir);
  for (const file of prot.hiddenFiles) args.push("--ro-bind", "/dev/null", file);
  args.push("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try");
  if (!p.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--new-session", "--cap-drop", "ALL", "--seccomp", String(seccompFd), "--chdir", p.cwd);
  return args;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The real git folder of a worktree (its `.git` file says `gitdir: …`), if `root` is one. */
function worktreeGitDir(root: string): string | undefined {
  const dotGit = join(root, ".git");
  try {
    if (!lstatSync(dotGit).isFile()) return undefined;
    const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
    if (!m) return undefined;
    const dir = isAbsolute(m[1]!.trim()) ? m[1]!.trim() : resolve(root, m[1]!.trim());
    return existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** The main repository's git folder of a worktree's git folder (its `commondir` file), else the folder itself. */
function commonDir(gitdir: string): string {
  try {
    const rel = readFileSync(join(gitdir, "commondir"), "utf8").trim();
    const dir = isAbsolute(rel) ? rel : resolve(gitdir, rel);
    return existsSync(dir) ? dir : gitdir;
  } catch {
    return existsSync(join(dirname(gitdir), "HEAD")) ? dirname(gitdir) : gitdir;
  }
}
