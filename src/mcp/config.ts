/**
 * MCP server configuration in the format other MCP clients use: `{"mcpServers": {name: {...}}}`
 * in the user's folders and, for a trusted folder only, its `.pi/` and `.pion/` (config-files.ts).
 * Pure apart from reading the files; a bad entry becomes an error for that server, never for the others.
 */
import { join, resolve } from "node:path";
import * as v from "valibot";
import { CORE_ENV, nameMatcher } from "../credentials/child-env.ts";
import { mcpConfigFiles } from "./config-files.ts";
import { expandHome } from "../util/home-path.ts";
import type { Credential } from "../credentials/guard.ts";
import { describeIssues } from "../util/issues.ts";
import { readJsonFile } from "../util/json-file.ts";
import { parseExposure, type ExposureRules } from "./exposure.ts";
import { parseOAuth, type OAuthConfig } from "./oauth-config.ts";

export const DEFAULT_TIMEOUT_S = 60;

const StringMap = v.record(v.string(), v.string());

const EntrySchema = v.looseObject({
  type: v.optional(v.string()),
  command: v.optional(v.string()),
  args: v.optional(v.array(v.string())),
  env: v.optional(StringMap),
  cwd: v.optional(v.string()),
  url: v.optional(v.string()),
  headers: v.optional(StringMap),
  enabled: v.optional(v.boolean()),
  timeout: v.optional(v.pipe(v.number(), v.minValue(0))),
  exposure: v.optional(v.string()),
  toolExposure: v.optional(v.record(v.string(), v.string())),
  description: v.optional(v.string()),
  oauth: v.optional(v.unknown()),
});
type Entry = v.InferOutput<typeof EntrySchema>;

const FileSchema = v.looseObject({ mcpServers: v.optional(v.record(v.string(), v.unknown())), autoEnableCodemode: v.optional(v.boolean()) });

interface Common extends ExposureRules {
  name: string;
  /** The file the entry came from, or "session" for servers given at run time. */
  source: string;
  enabled: boolean;
  timeoutMs: number;
  description?: string;
  /**
   * The variables `${VAR}` read into `env` or `headers`: their values are credentials (the
   * guard keeps them from every other process pion starts and masks them in output). The
   * shell's own variables (CORE_ENV, PWD) are settings and not listed.
   */
  credentialVars: string[];
}
export interface StdioServerConfig extends Common {
  transport: "stdio";
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}
export interface HttpServerConfig extends Common {
  transport: "http";
  url: string;
  headers: Record<string, string>;
  oauth?: OAuthConfig;
}
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** A configured server that cannot be used as written; shown in status with this reason. */
export interface McpConfigError {
  name: string;
  source: string;
  transport: "stdio" | "http" | "unknown";
  error: string;
}

export interface McpConfig {
  servers: McpServerConfig[];
  errors: McpConfigError[];
  /** `autoEnableCodemode` beside `mcpServers` (the last file that sets it wins): false keeps the codemode tool off. */
  autoEnableCodemode?: boolean;
}

export const NAME_PATTERN = /^[A-Za-z0-9_-]+$/;

export const userConfigPath = (home: string) => join(home, "mcp.json");
export const projectConfigPath = (cwd: string) => join(cwd, ".pion", "mcp.json");

/** Reads one file (missing file: empty). Throws naming the file. */
function readFile(path: string): v.InferOutput<typeof FileSchema> {
  const raw = readJsonFile(path);
  if (raw === undefined) return {};
  const parsed = v.safeParse(FileSchema, raw);
  if (!parsed.success) throw new Error(`Invalid MCP configuration in ${path}: ${describeIssues(parsed.issues)}`);
  return parsed.output;
}

/** Reads the raw `mcpServers` object of one file (missing file: empty). Throws naming the file. */
export const readServers = (path: string): Record<string, unknown> => readFile(path).mcpServers ?? {};

/**
 * The servers to connect: the user's, then a trusted project's (an entry replaces the user's
 * entry of the same name; one without `command`/`url`/`type` only adjusts `enabled`,
 * `exposure` and `toolExposure` of the user's).
 */
export function loadMcpConfig(o: { home: string; cwd: string; env: Record<string, string | undefined>; projectTrusted: boolean }): McpConfig {
  const out: McpConfig = { servers: [], errors: [] };
  const entries = new Map<string, { entry: unknown; source: string }>();
  const files = mcpConfigFiles(o);
  for (const file of files) {
    let servers: Record<string, unknown>;
    try {
      const f = readFile(file);
      servers = f.mcpServers ?? {};
      if (f.autoEnableCodemode !== undefined) out.autoEnableCodemode = f.autoEnableCodemode;
    } catch (err) {
      out.errors.push({ name: "*", source: file, transport: "unknown", error: err instanceof Error ? err.message : String(err) });
      continue;
    }
    for (const [name, entry] of Object.entries(servers)) {
      const prev = entries.get(name);
      if (prev && isAdjustment(entry) && prev.entry && typeof prev.entry === "object") {
        entries.set(name, { entry: { ...prev.entry, ...pickAdjustment(entry as Record<string, unknown>) }, source: prev.source });
      } else entries.set(name, { entry, source: file });
    }
  }
  const seen = new Map<string, string>();
  for (const [name, { entry, source }] of entries) {
    // `a-b` and `a_b` name the same tools (mcp__a_b__…): the first one wins.
    const key = name.replace(/-/g, "_");
    const first = seen.get(key);
    if (first !== undefined) {
      out.errors.push({ name, source, transport: "unknown", error: `Server "${name}" has the same tool names as server "${first}" (names differing only in "-" and "_" are one server); skipped` });
      continue;
    }
    const r = toServerConfig(name, entry, source, o.env, o.cwd);
    if ("error" in r) out.errors.push(r);
    else {
      seen.set(key, name);
      out.servers.push(r);
    }
  }
  return out;
}

/**
 * The configured servers with those given at run time (an ACP client's `mcpServers`) added:
 * a run-time server replaces a configured server of the same name, or the error it had.
 */
export function withRuntimeServers(config: McpConfig | undefined, runtime: readonly McpServerConfig[]): McpConfig {
  const names = new Set(runtime.map((s) => s.name));
  return {
    servers: [...(config?.servers ?? []).filter((s) => !names.has(s.name)), ...runtime],
    errors: (config?.errors ?? []).filter((e) => !names.has(e.name)),
  };
}

const isAdjustment = (e: unknown) =>
  !!e && typeof e === "object" && !("command" in e) && !("url" in e) && !("type" in e);

function pickAdjustment(e: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["enabled", "exposure", "toolExposure"]) if (k in e) out[k] = e[k];
  return out;
}

/** Validates one entry and expands `${VAR}`; a problem is an McpConfigError for that server. */
export function toServerConfig(
  name: string,
  raw: unknown,
  source: string,
  env: Record<string, string | undefined>,
  cwd: string,
): McpServerConfig | McpConfigError {
  const fail = (transport: McpConfigError["transport"], error: string): McpConfigError => ({ name, source, transport, error });
  if (!NAME_PATTERN.test(name)) return fail("unknown", `Invalid server name "${name}": use letters, digits, "_" and "-"`);
  const parsed = v.safeParse(EntrySchema, raw);
  if (!parsed.success) return fail("unknown", `${describeIssues(parsed.issues)} (server "${name}" in ${source})`);
  const e: Entry = parsed.output;
  const type = e.type;
  if (type === "sse") {
    return fail("http", `The legacy SSE transport is not supported; use the server's streamable HTTP endpoint (often /mcp instead of /sse)`);
  }
  if (type !== undefined && !["stdio", "http", "streamable-http"].includes(type)) {
    return fail("unknown", `Unknown transport type "${type}": expected stdio, http or streamable-http`);
  }
  const isStdio = type === "stdio" || (type === undefined && e.command !== undefined);
  const isHttp = type === "http" || type === "streamable-http" || (type === undefined && e.url !== undefined && e.command === undefined);
  const exposure = parseExposure(e.exposure);
  if (!exposure) return fail("unknown", `Server "${name}": unknown exposure "${e.exposure}" (expected codemode, deferred, direct or hidden)`);
  const toolExposure: ExposureRules["toolExposure"] = [];
  for (const [pattern, x] of Object.entries(e.toolExposure ?? {})) {
    const te = parseExposure(x);
    if (!te) return fail("unknown", `Server "${name}": unknown exposure "${x}" for tool "${pattern}" in toolExposure`);
    toolExposure.push([pattern, te]);
  }
  const common = {
    name,
    source,
    enabled: e.enabled !== false,
    timeoutMs: (e.timeout ?? DEFAULT_TIMEOUT_S) * 1000,
    exposure,
    toolExposure,
    ...(e.description !== undefined ? { description: e.description } : {}),
  };
  const read = new Set<string>();
  const credentialVars = () => [...read].filter((n) => !isShellSetting(n));
  try {
    if (isStdio) {
      if (!e.command) return fail("stdio", `Server "${name}" has no command`);
      return {
        ...common,
        transport: "stdio",
        command: expandHome(e.command),
        args: (e.args ?? []).map((a) => expandHome(expandVars(a, env, `args of "${name}"`))),
        env: mapValues(e.env ?? {}, (val, k) => expandValue(val, env, `env.${k} of "${name}"`, read)),
        cwd: resolve(cwd, expandHome(e.cwd ?? ".")),
        credentialVars: credentialVars(),
      };
    }
    if (isHttp) {
      if (!e.url) return fail("http", `Server "${name}" has no url`);
      let url: URL;
      try {
        url = new URL(expandVars(e.url, env, `url of "${name}"`));
      } catch {
        return fail("http", `Server "${name}" has an invalid url: ${e.url}`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") return fail("http", `Server "${name}": url must be http or https`);
      const oauth = e.oauth === undefined ? undefined : parseOAuth(e.oauth, (val, k) => expandValue(val, env, `oauth.${k} of "${name}"`, read));
      if (typeof oauth === "string") return fail("http", `Server "${name}": ${oauth}`);
      return {
        ...common,
        transport: "http",
        url: url.href,
        headers: mapValues(e.headers ?? {}, (val, k) => expandValue(val, env, `headers.${k} of "${name}"`, read)),
        ...(oauth ? { oauth } : {}),
        credentialVars: credentialVars(),
      };
    }
  } catch (err) {
    return fail(isStdio ? "stdio" : "http", err instanceof Error ? err.message : String(err));
  }
  return fail("unknown", `Server "${name}" needs a "command" (stdio) or a "url" (streamable HTTP)`);
}

/** An `env` or `headers` value: a `!command` is kept as written (the connection runs it), anything else expanded. */
const expandValue = (value: string, env: Record<string, string | undefined>, where: string, read?: Set<string>): string =>
  value.startsWith("!") ? value : expandVars(value, env, where, read);

/** `${VAR}` from pion's environment; a variable that is not set is an error naming it. `read` collects the names. */
export function expandVars(value: string, env: Record<string, string | undefined>, where: string, read?: Set<string>): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const val = env[name];
    if (val === undefined) throw new Error(`Environment variable ${name} is not set (used in ${where})`);
    read?.add(name);
    return val;
  });
}

const isShellSetting = nameMatcher([...CORE_ENV, "PWD"]);

/** The credentials the servers' `${VAR}` references read, for the credential guard (values come from its environment). */
export function serverCredentials(servers: readonly McpServerConfig[]): Credential[] {
  return [...new Set(servers.flatMap((s) => s.credentialVars))].map((name) => ({ label: name, envNames: [name] }));
}


function mapValues(obj: Record<string, string>, f: (v: string, k: string) => string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj)) out[k] = f(val, k);
  return out;
}
