/**
 * Git package sources as the reference reads them (docs/packages.md): `git:` followed by
 * `host/user/repo`, `git@host:user/repo`, or an `https://`, `http://`, `ssh://` or `git://` URL,
 * or one of those URL forms with no prefix (`git://` needs the prefix, since its own `git:`
 * reads as one). An `@ref` after the path names a branch, tag or commit. Repositories on the
 * big hosts are recognised as npm's hosted-git resolution does: `github:`, `gitlab:`,
 * `bitbucket:`, `sourcehut:` shortcuts, a bare `user/repo` meaning GitHub, `www.` dropped, a
 * GitHub `/tree/<ref>` browse URL or a `#ref` fragment naming the ref. A package's identity is
 * `git:<host>/<path>`, so the ssh and https forms of one repository are one package, and it is
 * checked out at `<root>/<host>/<path>`; a host or path that could leave that folder (`..`, an
 * absolute path, NUL, a backslash, also percent-encoded) is not a git source.
 */
import { join, resolve, sep } from "node:path";

export interface GitSource {
  type: "git";
  /** What `git clone` is given. */
  repo: string;
  host: string;
  /** `user/repo` (or deeper, as GitLab groups are), without `.git`. */
  path: string;
  ref?: string;
}

const URL_SCHEME = /^(https?|ssh|git):\/\//i;
const SCP = /^git@([^:]+):(.+)$/;

/** The repository and the `@ref` after its path (the first `@` of the path; a bare trailing `@` is no ref). */
function splitRef(url: string): { repo: string; ref?: string } {
  const cut = (path: string): [string, string] | undefined => {
    const at = path.indexOf("@");
    return at > 0 && at < path.length - 1 ? [path.slice(0, at), path.slice(at + 1)] : undefined;
  };
  const scp = SCP.exec(url);
  if (scp) {
    const parts = cut(scp[2]!);
    return parts ? { repo: `git@${scp[1]}:${parts[0]}`, ref: parts[1] } : { repo: url };
  }
  if (url.includes("://")) {
    const u = parseUrl(url);
    const parts = u && cut(u.pathname.replace(/^\/+/, ""));
    if (!u || !parts) return { repo: url };
    u.pathname = `/${parts[0]}`;
    return { repo: u.toString().replace(/\/$/, ""), ref: parts[1] };
  }
  const slash = url.indexOf("/");
  const parts = slash < 0 ? undefined : cut(url.slice(slash + 1));
  return parts ? { repo: `${url.slice(0, slash)}/${parts[0]}`, ref: parts[1] } : { repo: url };
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

type Hosted = { user: string; project: string; ref?: string };
interface HostRule {
  domain: string;
  protocols: readonly string[];
  /** user and project from a URL's path segments (after the leading `/`), or nothing when the URL is not a repository's. */
  extract(segments: string[], hash: string): Hosted | undefined;
}

const dropGit = (name: string) => (name.endsWith(".git") ? name.slice(0, -4) : name);
const twoSegments =
  (refused: string) =>
  ([user, project, aux]: string[], hash: string): Hosted | undefined =>
    user && project && aux !== refused ? { user, project: dropGit(project), ref: hash } : undefined;
const SECURE = ["git+ssh:", "git+https:", "ssh:", "https:"];

const HOSTS: Record<string, HostRule> = {
  github: {
    domain: "github.com",
    protocols: ["git:", "http:", ...SECURE],
    extract: ([user, project, kind, ref], hash) => {
      if (kind && kind !== "tree") return undefined;
      return user && project ? { user, project: dropGit(project), ref: kind ? ref : hash } : undefined;
    },
  },
  bitbucket: { domain: "bitbucket.org", protocols: SECURE, extract: twoSegments("get") },
  gitlab: {
    domain: "gitlab.com",
    protocols: SECURE,
    extract: (segments, hash) => {
      const path = segments.join("/");
      if (path.includes("/-/") || path.includes("/archive.tar.gz")) return undefined;
      const project = dropGit(segments[segments.length - 1] ?? "");
      const user = segments.slice(0, -1).join("/");
      return user && project ? { user, project, ref: hash } : undefined;
    },
  },
  sourcehut: { domain: "git.sr.ht", protocols: ["git+ssh:", "https:"], extract: twoSegments("archive") },
};
const BY_DOMAIN = new Map(Object.values(HOSTS).map((h) => [h.domain, h]));

/** `user/repo` with nothing that makes it a path, a URL or an npm spec: GitHub's shorthand. */
const isGithubShorthand = (s: string): boolean => {
  const hash = s.indexOf("#");
  const head = hash < 0 ? s : s.slice(0, hash);
  const slash = head.indexOf("/");
  return slash > 0 && head.indexOf("/", slash + 1) < 0 && !head.endsWith("/") && !s.startsWith(".") && !/[\s@:]/.test(head);
};

const decode = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
};

type HostedRepo = { domain: string; path: string; ref?: string; shortcut: boolean };

/** A repository on one of the known hosts, with its host's domain and `user/project`; `#ref` names a ref. */
function hostedRepo(candidate: string): HostedRepo | undefined {
  const text = isGithubShorthand(candidate) ? `github:${candidate}` : candidate;
  const shortcut = /^(github|gitlab|bitbucket|sourcehut):/.exec(text);
  if (shortcut) {
    const host = HOSTS[shortcut[1]!]!;
    const [body = "", hash = ""] = text.slice(shortcut[0].length).split(/#(.*)/s);
    const path = body.replace(/^\/+/, "").replace(/^[^/]*@/, "");
    const slash = path.lastIndexOf("/");
    const user = decode(path.slice(0, slash));
    const project = decode(dropGit(path.slice(slash + 1)));
    if (slash <= 0 || !user || !project) return undefined;
    return { domain: host.domain, path: `${user}/${project}`, ref: decode(hash) || undefined, shortcut: true };
  }
  const fixed = withScheme(text);
  const u = parseUrl(fixed) ?? parseUrl(scpAsUrl(fixed));
  if (!u) return undefined;
  const host = BY_DOMAIN.get(u.hostname.replace(/^www\./, ""));
  if (!host || !host.protocols.includes(u.protocol)) return undefined;
  const found = host.extract(u.pathname.slice(1).split("/"), u.hash.slice(1));
  const user = found && decode(found.user);
  const project = found && decode(found.project);
  const ref = found?.ref ? decode(found.ref) : "";
  if (!user || !project || ref === undefined) return undefined;
  return { domain: host.domain, path: `${user}/${project}`, ref: ref || undefined, shortcut: false };
}

const KNOWN_SCHEMES = new Set(["git+ssh:", "ssh:", "git+https:", "git:", "http:", "https:", "git+http:"]);

/** A URL scheme for text that lacks one: `user@host:path` reads as ssh, `host:path` as `host://path`. */
function withScheme(text: string): string {
  const colon = text.indexOf(":");
  if (KNOWN_SCHEMES.has(text.slice(0, colon + 1)) || text.startsWith("://", colon)) return text;
  const at = text.indexOf("@");
  if (at > -1) return at > colon ? `git+ssh://${text}` : text;
  return `${text.slice(0, colon + 1)}//${text.slice(colon + 1)}`;
}

/** `user@host:path` as the `git+ssh://` URL it means (the last `:` before any `#` becomes `/`). */
function scpAsUrl(text: string): string {
  const head = (s: string) => (s.includes("#") ? s.slice(0, s.indexOf("#")) : s);
  const at = head(text).lastIndexOf("@");
  const colon = head(text).lastIndexOf(":");
  const url = colon > at ? `${text.slice(0, colon)}/${text.slice(colon + 1)}` : text;
  return !head(url).includes(":") && !url.includes("//") ? `git+ssh://${url}` : url;
}

/** Whether a host or path part could name a folder outside the install root, as written or decoded. */
function unsafePart(value: string, slashes: boolean): boolean {
  const decoded = decode(value);
  if (decoded === undefined) return true;
  return [value, decoded].some((v) => v.includes("\0") || v.includes("\\") || v.startsWith("/") || (!slashes && v.includes("/")) || v.split("/").includes(".."));
}

function gitSource(repo: string, host: string, rawPath: string, ref: string | undefined): GitSource | undefined {
  if (rawPath.startsWith("/")) return undefined;
  const path = rawPath.replace(/\.git$/, "").replace(/^\/+/, "");
  if (!host || path.split("/").length < 2 || unsafePart(host, false) || unsafePart(path, true)) return undefined;
  return { type: "git", repo, host, path, ...(ref ? { ref } : {}) };
}

/** Any other host: an scp-like address, a URL, or `host/path` where the host has a dot (or is localhost). */
function genericRepo(url: string): GitSource | undefined {
  const { repo, ref } = splitRef(url);
  const scp = SCP.exec(repo);
  if (scp) return gitSource(repo, scp[1]!, scp[2]!, ref);
  if (/^(https?|ssh|git):\/\//.test(repo)) {
    const u = parseUrl(repo);
    return u ? gitSource(repo, u.hostname, u.pathname.replace(/^\/+/, ""), ref) : undefined;
  }
  const slash = repo.indexOf("/");
  const host = repo.slice(0, slash);
  if (slash < 0 || (!host.includes(".") && host !== "localhost")) return undefined;
  return gitSource(`https://${repo}`, host, repo.slice(slash + 1), ref);
}

/** The git source a package source names, or undefined when it names none. */
export function parseGitSource(source: string): GitSource | undefined {
  const trimmed = source.trim();
  const prefixed = trimmed.startsWith("git:");
  const url = prefixed ? trimmed.slice(4).trim() : trimmed;
  if (!prefixed && !URL_SCHEME.test(url)) return undefined;
  const split = splitRef(url);
  const explicit = /^(https?|ssh|git):\/\/|^git@/.test(split.repo);
  const withRef = (repo: string) => (split.ref ? [`${repo}#${split.ref}`] : []);
  for (const candidate of [...withRef(split.repo), url, ...withRef(`https://${split.repo}`), `https://${url}`]) {
    const hosted = hostedRepo(candidate);
    if (!hosted || (split.ref && hosted.path.slice(hosted.path.lastIndexOf("/") + 1).includes("@"))) continue;
    // A shortcut has no URL of its own: it is cloned from its host over https.
    const repo = hosted.shortcut ? `https://${hosted.domain}/${hosted.path}` : explicit ? split.repo : `https://${split.repo}`;
    return gitSource(repo, hosted.domain, hosted.path, hosted.ref ?? split.ref);
  }
  return genericRepo(url);
}

/** What identifies a git package in every settings file: its host and path, whatever the URL form and ref. */
export const gitIdentity = (source: GitSource): string => `git:${source.host}/${source.path}`;

/** A folder under `root`, refusing one that would lie outside it. */
function under(root: string, ...parts: string[]): string {
  const top = resolve(root);
  const path = resolve(top, ...parts);
  if (path !== top && !path.startsWith(`${top}${sep}`)) throw new Error(`Refusing to use path outside package install root: ${path}`);
  return path;
}

/** Where a settings folder's git source is checked out: `<settings folder>/git/<host>/<path>`. */
export const gitRoot = (settingsDir: string): string => join(settingsDir, "git");
export const gitPackageDir = (settingsDir: string, source: GitSource): string => under(gitRoot(settingsDir), source.host, source.path);

/**
 * Where a `-e` git source is checked out: under `<tmp>/git-<host>/`, in a folder named by a
 * hash of host, path and ref, so each ref of one repository has a checkout of its own.
 */
export function temporaryGitDir(tmpRoot: string, source: GitSource): string {
  const prefix = `git-${source.host}`;
  // Bun's hasher: node:crypto would load Node's stream machinery at start-up (packages.ts is read then).
  const hash = new Bun.CryptoHasher("sha256")
    .update(`${prefix}-${source.path}${source.ref ? `@${source.ref}` : ""}`)
    .digest("hex")
    .slice(0, 8);
  return under(under(tmpRoot, prefix), hash, source.path);
}
