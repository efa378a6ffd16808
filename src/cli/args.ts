/**
 * The command line: every option of the reference's CLI (its docs/cli.md), with the same
 * argument shapes, plus what extensions register. Pure: argv in, values out; errors are
 * UsageError (cli.ts prints one line and exits 2).
 *
 * Unknown long options cannot be judged before extensions are loaded (they may register
 * them), so the first pass sets them aside (`pending`) and `finalizeArgs` decides once the
 * registered flags are known. Unknown short options are rejected at once, as the reference does.
 */

/**
 * boolean: a switch; string: one value; list: a value per use, repeatable; optional: takes the
 * next word as its value when it is not an option or an `@file` (`--list-models [search]`).
 */
export type FlagKind = "boolean" | "string" | "list" | "optional";

export interface FlagDef {
  kind: FlagKind;
  /** The short form without its dash; the reference's are one to three letters (`-xt`, `-nbt`). */
  short?: string;
  /** Placeholder in --help. */
  value?: string;
  help: string;
  /** `compat`: concerns only the reference's terminal UI; accepted, no effect in pion's modes. */
  group?: "compat";
}

export const FLAGS = {
  mode: { kind: "string", value: "rpc|json|print|text|acp", help: "Output mode (text is print mode; acp: Agent Client Protocol for editors)" },
  print: { kind: "boolean", short: "p", help: "Print mode: run the prompts and print the final text" },
  export: { kind: "string", value: "file", help: "Export a session file to HTML (to the next word, if any) and exit" },
  provider: { kind: "string", value: "name", help: "Provider of the model (anthropic, openai, ...)" },
  model: { kind: "string", value: "pattern", help: "Model id, provider/id or pattern, optional :thinking suffix" },
  "api-key": { kind: "string", value: "key", help: "API key for the selected provider (not stored)" },
  thinking: { kind: "string", value: "level", help: "Thinking level: off, minimal, low, medium, high, xhigh, max" },
  models: { kind: "string", value: "patterns", help: "Comma-separated model patterns that cycle_model goes through" },
  "list-models": { kind: "optional", value: "search", help: "List the available models (fuzzy search) and exit" },
  continue: { kind: "boolean", short: "c", help: "Continue the most recent session of this folder" },
  session: { kind: "string", value: "path|id", help: "Open a session file or id" },
  "session-id": { kind: "string", value: "id", help: "Open this folder's session with this id, or create it" },
  fork: { kind: "string", value: "path|id", help: "Fork a session file or id into a new session here" },
  "session-dir": { kind: "string", value: "dir", help: "Directory where sessions are stored" },
  "no-session": { kind: "boolean", help: "Keep the session in memory only" },
  name: { kind: "string", short: "n", value: "name", help: "Session display name" },
  tools: { kind: "string", short: "t", value: "list", help: "Tools to enable: names replace, +name adds, -name removes" },
  "exclude-tools": { kind: "string", short: "xt", value: "list", help: "Tools to disable (names or * patterns), after all else" },
  "no-builtin-tools": { kind: "boolean", short: "nbt", help: "No built-in tools by default (extension tools stay)" },
  "no-tools": { kind: "boolean", short: "nt", help: "No tools by default (built-in and extension)" },
  extension: { kind: "list", short: "e", value: "path", help: "Load an extension file or folder (repeatable)" },
  "no-extensions": { kind: "boolean", short: "ne", help: "Do not discover extensions (-e paths still load)" },
  "no-mcp": { kind: "boolean", help: "Disable MCP servers for this run" },
  skill: { kind: "list", value: "path", help: "Load a skill file or folder (repeatable)" },
  "no-skills": { kind: "boolean", short: "ns", help: "Do not discover skills (--skill paths still load)" },
  "prompt-template": { kind: "list", value: "path", help: "Load a prompt template file or folder (repeatable)" },
  "no-prompt-templates": { kind: "boolean", short: "np", help: "Do not discover prompt templates (--prompt-template paths still load)" },
  "no-context-files": { kind: "boolean", short: "nc", help: "Do not read AGENTS.md / CLAUDE.md files" },
  "system-prompt": { kind: "string", value: "text|path", help: "Replace the base system prompt (text or a file)" },
  "append-system-prompt": { kind: "list", value: "text|path", help: "Append text or a file to the system prompt (repeatable)" },
  "max-turns": { kind: "string", value: "N", help: "Stop a run after this many model calls (retries and compaction count)" },
  "max-cost": { kind: "string", value: "USD", help: "Stop a run once its model calls cost this many dollars" },
  verbose: { kind: "boolean", help: "Describe what was loaded at start-up on stderr" },
  approve: { kind: "boolean", short: "a", help: "Trust this folder's project configuration for this run" },
  "no-approve": { kind: "boolean", short: "na", help: "Ignore this folder's trust-gated configuration (wins over -a)" },
  sandbox: { kind: "string", value: "off|read-only|workspace-write", help: "Run the model's commands in a bubblewrap sandbox: workspace-write (only the cwd writable, no network), read-only, or off (the default)" },
  "permission-mode": { kind: "string", value: "auto|ask|read-only", help: "Tool permissions: auto (run unless denied), ask (approve what can change something), read-only" },
  allow: { kind: "list", value: "rule", help: "Allow tool calls matching a rule, like bash(git status*) or edit(src/**) (repeatable)" },
  deny: { kind: "list", value: "rule", help: "Deny tool calls matching a rule, like bash(rm *) or read(~/.ssh/**) (repeatable)" },
  offline: {
    kind: "boolean",
    help: "Same as PI_OFFLINE=1: no automatic network activity (pion starts none; extensions and tools see PI_OFFLINE=1); model, MCP and `pion models refresh` requests still go",
  },
  version: { kind: "boolean", short: "v", help: "Print the version" },
  help: { kind: "boolean", short: "h", help: "Show this help" },
  resume: { kind: "boolean", short: "r", help: "Pick a session in a terminal UI", group: "compat" },
  theme: { kind: "list", value: "path", help: "Load a terminal theme", group: "compat" },
  "use-theme": { kind: "string", value: "name", help: "Initial terminal theme", group: "compat" },
  "no-themes": { kind: "boolean", help: "Disable terminal themes", group: "compat" },
  "tui-mode": { kind: "string", value: "regular|fullscreen", help: "Terminal UI mode", group: "compat" },
} as const satisfies Record<string, FlagDef>;

export type FlagName = keyof typeof FLAGS;
type ValueOf<K extends FlagKind> = K extends "boolean" ? true : K extends "list" ? string[] : K extends "optional" ? string | true : string;
export type FlagValues = { -readonly [N in FlagName]?: ValueOf<(typeof FLAGS)[N]["kind"]> };

/** A flag an extension registered with `pi.registerFlag` (the reference's two types). */
export interface ExtraFlag {
  name: string;
  type: "boolean" | "string";
}

export interface ParsedArgs {
  values: FlagValues;
  positionals: string[];
  /** Unknown long options of the first pass, as typed (`--name` or `--name=value`). */
  pending: string[];
  /** Values of extension flags, after `finalizeArgs`. */
  extensionFlags: Record<string, string | boolean>;
}

export class UsageError extends Error {}

const TUI_MODES = ["regular", "fullscreen"];
const SESSION_ID = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** `--name`, `-n`, `-xt` ... to the flag they spell. */
const BY_TOKEN: ReadonlyMap<string, FlagName> = new Map(
  (Object.entries(FLAGS) as [FlagName, FlagDef][]).flatMap(([name, def]) => [
    [`--${name}`, name] as const,
    ...(def.short ? [[`-${def.short}`, name] as const] : []),
  ]),
);

/** First pass: known flags parsed, unknown long options set aside for `finalizeArgs`. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  return parse(argv, undefined);
}

/**
 * Second pass, once extensions are loaded: the same argv with `extra` known too. An unknown
 * option left is a UsageError naming the closest known one.
 */
export function finalizeArgs(argv: readonly string[], extra: readonly ExtraFlag[]): ParsedArgs {
  return parse(argv, new Map(extra.filter((f) => !BY_TOKEN.has(`--${f.name}`)).map((f) => [f.name, f.type])));
}

function parse(argv: readonly string[], extra: ReadonlyMap<string, "boolean" | "string"> | undefined): ParsedArgs {
  const out: ParsedArgs = { values: {}, positionals: [], pending: [], extensionFlags: {} };
  const values = out.values as Record<string, string | true | string[]>;
  const isOption = (tok: string) => BY_TOKEN.has(tok.split("=")[0]!) || (extra?.has(tok.slice(2).split("=")[0]!) ?? false);
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === "--") {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!tok.startsWith("-") || tok === "-") {
      out.positionals.push(tok);
      continue;
    }
    const eq = tok.indexOf("=");
    const flag = eq > 0 ? tok.slice(0, eq) : tok;
    const inline = eq > 0 ? tok.slice(eq + 1) : undefined;
    const name = BY_TOKEN.get(flag);
    if (!name) {
      const extType = flag.startsWith("--") ? extra?.get(flag.slice(2)) : undefined;
      if (extType === "boolean") {
        if (inline !== undefined) throw new UsageError(`Option ${flag} takes no value`);
        out.extensionFlags[flag.slice(2)] = true;
      } else if (extType === "string") {
        const value = inline ?? argv[i + 1];
        if (value === undefined || (inline === undefined && (value.startsWith("-") || value.startsWith("@")))) {
          throw new UsageError(`Option ${flag} needs a value`);
        }
        if (inline === undefined) i++;
        out.extensionFlags[flag.slice(2)] = value;
      } else if (flag.startsWith("--") && extra === undefined) {
        out.pending.push(tok);
      } else {
        throw new UsageError(unknownOption(flag, [...(extra?.keys() ?? [])].map((n) => `--${n}`)));
      }
      continue;
    }
    const def: FlagDef = FLAGS[name];
    if (def.kind === "boolean") {
      if (inline !== undefined) throw new UsageError(`Option ${flag} takes no value`);
      values[name] = true;
      continue;
    }
    if (def.kind === "optional") {
      const next = argv[i + 1];
      if (inline !== undefined) values[name] = inline;
      else if (next !== undefined && !next.startsWith("-") && !next.startsWith("@")) values[name] = argv[++i]!;
      else values[name] = true;
      continue;
    }
    let value: string | undefined = inline;
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || isOption(value)) throw new UsageError(`Option ${flag} needs a value`);
      i++;
    }
    if (def.kind === "list") values[name] = [...((values[name] as string[] | undefined) ?? []), value];
    else values[name] = value;
  }
  check(out.values);
  return out;
}

/** Value checks and the combinations the reference rejects. */
function check(v: FlagValues): void {
  if (v["tui-mode"] !== undefined && !TUI_MODES.includes(v["tui-mode"])) {
    throw new UsageError(`Invalid --tui-mode "${v["tui-mode"]}": expected regular or fullscreen`);
  }
  const conflicts = (flag: string, others: [boolean, string][]) => {
    const found = others.filter(([set]) => set).map(([, name]) => name);
    if (found.length > 0) throw new UsageError(`${flag} cannot be combined with ${found.join(", ")}`);
  };
  if (v.fork !== undefined) {
    conflicts("--fork", [
      [v.session !== undefined, "--session"],
      [v.continue === true, "--continue"],
      [v.resume === true, "--resume"],
      [v["no-session"] === true, "--no-session"],
    ]);
  }
  if (v["session-id"] !== undefined) {
    conflicts("--session-id", [
      [v.session !== undefined, "--session"],
      [v.continue === true, "--continue"],
      [v.resume === true, "--resume"],
    ]);
    if (!SESSION_ID.test(v["session-id"])) {
      throw new UsageError(
        `Invalid --session-id "${v["session-id"]}": use letters, digits, ".", "_" and "-", starting and ending with a letter or digit`,
      );
    }
  }
}

function unknownOption(flag: string, extensionFlags: readonly string[]): string {
  const known = [...BY_TOKEN.keys(), ...extensionFlags];
  const guess = closest(flag, known.filter((t) => t.startsWith("--") === flag.startsWith("--")));
  return `Unknown option: ${flag}${guess ? ` (did you mean ${guess}?)` : ""}`;
}

/** The candidate nearest to `word` by edit distance, when it is near enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(word.length / 4)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
