/**
 * Configuration values that name a secret rather than hold it, in the reference's syntax (its
 * docs/models.md): a leading `!` runs the rest as a shell command and takes its trimmed stdout;
 * anything else is a template where `$NAME` and `${NAME}` read the environment and `$$` / `$!`
 * stand for a literal `$` / `!`. Used for models.json `apiKey` and `headers` and auth.json keys.
 */

type Env = Record<string, string | undefined>;
type Part = { literal: string } | { env: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
/** How long a `!command` may run before its value counts as unresolved. */
export const COMMAND_TIMEOUT_MS = 10_000;

function parseTemplate(spec: string): Part[] {
  const parts: Part[] = [];
  const literal = (text: string) => {
    if (!text) return;
    const last = parts.at(-1);
    if (last && "literal" in last) last.literal += text;
    else parts.push({ literal: text });
  };
  let i = 0;
  while (i < spec.length) {
    const dollar = spec.indexOf("$", i);
    if (dollar < 0) {
      literal(spec.slice(i));
      break;
    }
    literal(spec.slice(i, dollar));
    const next = spec[dollar + 1];
    if (next === "$" || next === "!") {
      literal(next);
      i = dollar + 2;
      continue;
    }
    if (next === "{") {
      const end = spec.indexOf("}", dollar + 2);
      const name = end < 0 ? "" : spec.slice(dollar + 2, end);
      if (end >= 0 && NAME.exec(name)?.[0] === name) {
        parts.push({ env: name });
        i = end + 1;
      } else if (end >= 0) {
        literal(spec.slice(dollar, end + 1));
        i = end + 1;
      } else {
        literal("$");
        i = dollar + 1;
      }
      continue;
    }
    const name = NAME.exec(spec.slice(dollar + 1))?.[0];
    if (name) {
      parts.push({ env: name });
      i = dollar + 1 + name.length;
    } else {
      literal("$");
      i = dollar + 1;
    }
  }
  return parts;
}

export const isCommandValue = (spec: string): boolean => spec.startsWith("!");

/** The environment variables a value reads: its template's names, or the `$NAME`s a command mentions. */
export function configValueEnvNames(spec: string): string[] {
  if (isCommandValue(spec)) return [...new Set([...spec.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))];
  return [...new Set(parseTemplate(spec).flatMap((p) => ("env" in p ? [p.env] : [])))];
}

/** The value when it is one `$NAME` and nothing else: that name (the credential guard labels it so). */
export function soleEnvName(spec: string): string | undefined {
  if (isCommandValue(spec)) return undefined;
  const parts = parseTemplate(spec);
  return parts.length === 1 && "env" in parts[0]! ? parts[0].env : undefined;
}

const commandCache = new Map<string, string | undefined>();

/**
 * A command's trimmed stdout, or undefined when it fails, prints nothing or outlives the
 * timeout. stdin is closed and stderr dropped (a prompt from the command would hang or leak).
 * `cache` keeps the first result for the life of the process, as auth.json keys are kept.
 */
export function runValueCommand(command: string, env: Env, cache = true): string | undefined {
  const key = `${command}\0${cache ? "" : Math.random()}`;
  if (cache && commandCache.has(key)) return commandCache.get(key);
  let value: string | undefined;
  try {
    const out = Bun.spawnSync(["sh", "-c", command], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
      env: env as Record<string, string>,
      // PION_COMMAND_TIMEOUT_MS shortens it for tests of a hanging command.
      timeout: Number(env.PION_COMMAND_TIMEOUT_MS) || COMMAND_TIMEOUT_MS,
    });
    const text = out.stdout.toString().trim();
    value = out.exitCode === 0 && text ? text : undefined;
  } catch {
    value = undefined;
  }
  if (cache) commandCache.set(key, value);
  return value;
}

/**
 * Resolve a value: a command's output, or the template with every variable filled in
 * (undefined when one it names is unset or empty). `env` is the environment the value reads
 * and the command runs with.
 */
export function resolveConfigValue(spec: string, env: Env, o: { cache?: boolean } = {}): string | undefined {
  if (isCommandValue(spec)) return runValueCommand(spec.slice(1), env, o.cache ?? true);
  let out = "";
  for (const part of parseTemplate(spec)) {
    if ("literal" in part) out += part.literal;
    else {
      const val = env[part.env];
      if (!val) return undefined;
      out += val;
    }
  }
  return out;
}
