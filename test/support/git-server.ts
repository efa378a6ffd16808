/**
 * A real git server for package tests: bare repositories served over git's "dumb HTTP" protocol
 * (the bare repository's files, made fetchable by `git update-server-info`, served as they are
 * by Bun.serve on port 0), cloned by the machine's git through `http://127.0.0.1:<port>/<user>/<repo>.git`.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";

const GIT_ENV = { GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0", HOME: tmpdir() };

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const proc = Bun.spawn(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", ...args], {
    cwd,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, ...GIT_ENV },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`git ${args.join(" ")} failed: ${err}`);
  return out.trim();
}

export interface GitServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Where the bare repositories live (`<root>/<user>/<repo>.git`). */
  root: string;
  /** Files GET requests asked for, so a test can tell whether the network was used. */
  requests: string[];
  stop(): void;
}

export function startGitServer(): GitServer {
  const root = mkdtempSync(join(tmpdir(), "pion-git-server-"));
  const requests: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = normalize(decodeURIComponent(new URL(req.url).pathname));
      requests.push(path);
      if (path.includes("..")) return new Response("no", { status: 403 });
      const file = Bun.file(join(root, path));
      return (await file.exists()) ? new Response(file) : new Response("not found", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, root, requests, stop: () => server.stop(true) };
}

/**
 * Publish a repository `<user>/<repo>.git` on the server: one commit per file set (each set's
 * files written over the previous ones), `tags[i]` tagging commit i; returns the commit ids.
 */
export async function publishRepo(server: GitServer, name: string, commits: Record<string, string>[], tags: Record<number, string> = {}): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), "pion-git-work-"));
  await git(work, "init", "-q");
  const ids: string[] = [];
  for (const [i, files] of commits.entries()) {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(work, rel)), { recursive: true });
      writeFileSync(join(work, rel), text);
    }
    await git(work, "add", "-A");
    await git(work, "commit", "-q", "-m", `commit ${i}`);
    ids.push(await git(work, "rev-parse", "HEAD"));
    if (tags[i]) await git(work, "tag", tags[i]);
  }
  const bare = join(server.root, `${name}.git`);
  mkdirSync(dirname(bare), { recursive: true });
  await git(work, "clone", "-q", "--bare", work, bare);
  await git(bare, "update-server-info");
  return ids;
}

/** Add a commit to a published repository (and refresh what the dumb protocol serves). */
export async function pushCommit(server: GitServer, name: string, files: Record<string, string>): Promise<string> {
  const bare = join(server.root, `${name}.git`);
  const work = mkdtempSync(join(tmpdir(), "pion-git-work-"));
  await git(work, "clone", "-q", bare, ".");
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(work, rel)), { recursive: true });
    writeFileSync(join(work, rel), text);
  }
  await git(work, "add", "-A");
  await git(work, "commit", "-q", "-m", "more");
  await git(work, "push", "-q", "origin", "HEAD");
  await git(bare, "update-server-info");
  return git(work, "rev-parse", "HEAD");
}
