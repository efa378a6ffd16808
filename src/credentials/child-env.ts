/**
 * The environment of a process pion starts for the model or the host (the bash tool, the RPC
 * `bash` command, an extension's `pi.exec`, an MCP stdio server): pion's own environment
 * minus the credentials pion uses, shaped by the `shellEnv` settings. Pure: no I/O.
 */

/** `shellEnv` in settings.json. */
export interface ShellEnvSettings {
  /** Names (or globs) that pass even when they hold a credential. */
  include?: string[];
  /** More names (or globs, e.g. `*_TOKEN`, `AWS_*`) to strip. */
  exclude?: string[];
  /** `core`: only the variables a shell needs (CORE_ENV) plus `include`. Default `all`. */
  inherit?: "all" | "core";
}

export interface ChildEnvPolicy extends ShellEnvSettings {
  /** Variables pion reads a credential from. */
  credentialNames: ReadonlySet<string>;
  /** Credential values: a variable holding one of them is stripped whatever its name. */
  secretValues: readonly string[];
}

/** What `inherit: "core"` keeps. */
export const CORE_ENV = ["PATH", "HOME", "USER", "SHELL", "LANG", "LC_*", "TERM", "TMPDIR", "TZ"];

/**
 * A variable name that holds a secret rather than a setting: a catalog lists `AWS_REGION` or
 * `DATABRICKS_HOST` beside the key variables, and those stay.
 */
export const isSecretName = (name: string): boolean => /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|_PAT$/.test(name);

/** pion's own secrets among its `PION_*` variables (PION_HOME and the like pass). */
export const isPionSecret = (name: string): boolean => name.startsWith("PION_") && isSecretName(name);

/** A matcher for env-variable names: `*` is any run of characters, `?` one; case-sensitive. */
export function nameMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false;
  const exact = new Set(patterns.filter((p) => !/[*?]/.test(p)));
  const globs = patterns.filter((p) => /[*?]/.test(p));
  const re = globs.length
    ? new RegExp(`^(?:${globs.map((g) => g.replace(/[.+^${}()|[\]\\]/g, "\\$&").replaceAll("*", ".*").replaceAll("?", ".")).join("|")})$`)
    : undefined;
  return (name) => exact.has(name) || (re !== undefined && re.test(name));
}

const isCore = nameMatcher(CORE_ENV);

/**
 * `env` filtered by `policy`; `explicit` entries (an MCP server's configured `env`) are added
 * as given. Order of the rules: `include` passes; with `inherit: "core"` nothing else outside
 * CORE_ENV does; credential names, pion's secrets and `exclude` are stripped, and so is any
 * variable whose value contains a credential value.
 */
export function buildChildEnv(
  env: Readonly<Record<string, string | undefined>>,
  policy: ChildEnvPolicy,
  explicit?: Readonly<Record<string, string>>,
): Record<string, string> {
  const included = nameMatcher(policy.include ?? []);
  const excluded = nameMatcher(policy.exclude ?? []);
  const core = policy.inherit === "core";
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (!included(name)) {
      if (core && !isCore(name)) continue;
      if (policy.credentialNames.has(name) || isPionSecret(name) || excluded(name)) continue;
      if (policy.secretValues.some((s) => value.includes(s))) continue;
    }
    out[name] = value;
  }
  if (explicit) Object.assign(out, explicit);
  return out;
}
