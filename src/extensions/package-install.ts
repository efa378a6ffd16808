/**
 * Installing a package source with the machine's own programs, as the reference does: an npm
 * source with `npm install --prefix <settings folder>/npm`, a git source with `git clone` (then
 * `git checkout <ref>`, then `npm install` in the checkout when it has a package.json). Git and
 * ssh run without a terminal and are told never to prompt, so a repository that needs a password
 * fails at once with a message saying so. A clone that fails leaves no folder behind.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { gitRoot, type GitSource } from "./git-source.ts";
import { npmRoot, type ResolvedPackage } from "./packages.ts";

export interface InstallOptions {
  env: Record<string, string | undefined>;
  /** The npm program (tests point it elsewhere); default `$PION_NPM`, else `npm` on PATH. */
  npm?: string;
}

/** The environment git (and what it runs) gets: no terminal prompts, ssh in batch mode unless the user chose an ssh command. */
const quietGitEnv = (env: InstallOptions["env"]): Record<string, string> =>
  ({ ...env, GIT_TERMINAL_PROMPT: "0", GIT_SSH_COMMAND: env.GIT_SSH_COMMAND ?? "ssh -o BatchMode=yes" }) as Record<string, string>;

const PROMPT_REFUSED = /terminal prompts disabled|could not read (Username|Password)|Permission denied \(publickey|Host key verification failed|passphrase/i;
const OFFLINE = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH|network|offline/i;

const lastLines = (text: string): string =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("npm warn"))
    .slice(-3)
    .join(" | ");

async function run(program: string, args: string[], o: { env: Record<string, string>; cwd?: string; missing: string }): Promise<{ code: number; output: string; stdout: string }> {
  let proc;
  try {
    proc = Bun.spawn([program, ...args], { cwd: o.cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: o.env });
  } catch {
    throw new Error(o.missing);
  }
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, output: `${stderr}\n${stdout}`, stdout };
}

/** npm's stdout on success; a failure says which command, its exit code and its last lines (or that the registry was out of reach). */
export async function runNpm(o: InstallOptions, args: string[], cwd?: string): Promise<string> {
  const npm = o.npm ?? o.env.PION_NPM ?? "npm";
  const { code, output, stdout } = await run(npm, args, { env: quietGitEnv(o.env), cwd, missing: `${npm} was not found: pion installs npm packages with the npm on this machine` });
  if (code === 0) return stdout;
  if (OFFLINE.test(output)) throw new Error(`npm could not reach the registry (offline?): ${lastLines(output)}`);
  throw new Error(`npm ${args[0]} failed (exit ${code}): ${lastLines(output)}`);
}

/** git's output on success; a failure says the command, its exit code, its last lines and, when it wanted a password, why it got none. */
async function runGit(o: InstallOptions, args: string[], cwd?: string): Promise<string> {
  const { code, output, stdout } = await run("git", args, { env: quietGitEnv(o.env), cwd, missing: "git was not found: pion installs git packages with the git on this machine" });
  if (code === 0) return stdout.trim();
  const hint = PROMPT_REFUSED.test(output)
    ? "\ngit needed a password or passphrase, and pion runs it without a terminal: set up a credential helper or an ssh agent for this host"
    : "";
  throw new Error(`git ${args.join(" ")} failed (exit ${code}): ${lastLines(output)}${hint}`);
}

/** The folder npm installs into, made a private npm project the first time (as the reference makes its own). */
export function ensureNpmProject(dir: string): string {
  const root = npmRoot(dir);
  mkdirSync(root, { recursive: true });
  if (!existsSync(join(root, "package.json"))) writeFileSync(join(root, "package.json"), `${JSON.stringify({ name: "pi-extensions", private: true }, null, 2)}\n`);
  ensureGitignore(root);
  return root;
}

function ensureGitignore(root: string): void {
  mkdirSync(root, { recursive: true });
  if (!existsSync(join(root, ".gitignore"))) writeFileSync(join(root, ".gitignore"), "*\n!.gitignore\n");
}

/** `npm install <spec...>` into the settings folder's (or temporary folder's) `npm/`, pi's peers left to the host. */
export async function installNpmPackage(o: InstallOptions, spec: string | readonly string[], dir: string): Promise<void> {
  await runNpm(o, ["install", ...(typeof spec === "string" ? [spec] : spec), "--prefix", ensureNpmProject(dir), "--legacy-peer-deps", "--no-audit", "--no-fund"]);
}

/** A checkout's own dependencies, without dev dependencies or pi's peers (the host provides those). */
async function installCheckoutDependencies(o: InstallOptions, dir: string): Promise<void> {
  if (existsSync(join(dir, "package.json"))) await runNpm(o, ["install", "--omit=dev", "--legacy-peer-deps", "--no-audit", "--no-fund"], dir);
}

/**
 * A git source at `dir`: cloned (and checked out at its ref) when missing; when there, fetched
 * and reset to its ref, or to the remote's default branch without one, as `pi install` does.
 * `root` (the settings folder's `git/`) gets a .gitignore and loses folders a failed clone emptied.
 */
export async function installGitPackage(o: InstallOptions, source: GitSource, dir: string, root?: string): Promise<void> {
  if (existsSync(dir)) return updateGitCheckout(o, source, dir);
  if (root) ensureGitignore(root);
  mkdirSync(dirname(dir), { recursive: true });
  try {
    await runGit(o, ["clone", source.repo, dir]);
    if (source.ref) await runGit(o, ["checkout", source.ref], dir);
    await installCheckoutDependencies(o, dir);
  } catch (err) {
    removeGitPackage(dir, root);
    throw err;
  }
}

/** Bring a checkout to its ref's (or the remote default branch's) newest commit; a commit ref already checked out needs no network. */
export async function updateGitCheckout(o: InstallOptions, source: GitSource, dir: string): Promise<void> {
  const head = await runGit(o, ["rev-parse", "HEAD"], dir);
  if (source.ref && /^[0-9a-f]{7,64}$/i.test(source.ref) && head.toLowerCase().startsWith(source.ref.toLowerCase())) return;
  await runGit(o, ["fetch", "origin", source.ref ?? "HEAD"], dir);
  const target = await runGit(o, ["rev-parse", "FETCH_HEAD^{commit}"], dir);
  if (target === head) return;
  await runGit(o, ["reset", "--hard", target], dir);
  await runGit(o, ["clean", "-fdx"], dir);
  await installCheckoutDependencies(o, dir);
}

/** Remove a checkout and the folders above it (up to `root`) that it leaves empty. */
export function removeGitPackage(dir: string, root?: string): void {
  rmSync(dir, { recursive: true, force: true });
  if (!root) return;
  const top = resolve(root);
  for (let parent = dirname(dir); parent.startsWith(`${top}/`); parent = dirname(parent)) {
    if (existsSync(parent) && readdirSync(parent).length > 0) break;
    rmSync(parent, { recursive: true, force: true });
  }
}

/** Install a listed package that is not there yet (npm or git; a local path is never installed). */
export async function installListedPackage(o: InstallOptions, pkg: ResolvedPackage): Promise<void> {
  if (pkg.parsed.type === "npm") await installNpmPackage(o, pkg.parsed.spec, pkg.base);
  else if (pkg.parsed.type === "git") await installGitPackage(o, pkg.parsed, pkg.root, gitRoot(pkg.base));
}
