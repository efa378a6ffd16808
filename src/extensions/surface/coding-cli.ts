/**
 * The reference's `parseArgs`: a command line as its `Args` object, read by pion's own parser
 * (src/cli/args.ts). Options pion has that the reference lacks (`--sandbox`, `--allow`, ...)
 * are unknown to the reference, so they land in `unknownFlags` as its unknown options do. A
 * command line pion rejects is one error diagnostic.
 */
import { FLAGS, parseArgs as parsePion, type FlagDef, type FlagValues } from "../../cli/args.ts";

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
const MODES = ["text", "json", "rpc"];

/** The reference's Args fields that a pion flag sets unchanged. */
const SAME: [keyof FlagValues, string][] = [
  ["provider", "provider"], ["model", "model"], ["api-key", "apiKey"], ["system-prompt", "systemPrompt"],
  ["append-system-prompt", "appendSystemPrompt"], ["continue", "continue"], ["resume", "resume"], ["help", "help"],
  ["version", "version"], ["name", "name"], ["no-session", "noSession"], ["session", "session"], ["session-id", "sessionId"],
  ["fork", "fork"], ["session-dir", "sessionDir"], ["no-tools", "noTools"], ["no-builtin-tools", "noBuiltinTools"],
  ["extension", "extensions"], ["no-extensions", "noExtensions"], ["no-mcp", "noMcp"], ["print", "print"], ["export", "export"],
  ["no-skills", "noSkills"], ["skill", "skills"], ["prompt-template", "promptTemplates"], ["no-prompt-templates", "noPromptTemplates"],
  ["theme", "themes"], ["use-theme", "useTheme"], ["no-themes", "noThemes"], ["no-context-files", "noContextFiles"],
  ["list-models", "listModels"], ["offline", "offline"], ["tui-mode", "tuiMode"], ["verbose", "verbose"],
];
const SAME_FLAGS = new Set<string>([...SAME.map(([flag]) => flag), "mode", "models", "tools", "exclude-tools", "thinking", "approve", "no-approve"]);

const commaList = (s: string) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0);
const isModifier = (t: string) => t.startsWith("+") || t.startsWith("-");

/** `--tools` as the reference accepts it: plain names, or only exact `+name` / `-name` entries. */
function toolListError(tools: string[]): string | undefined {
  const modifiers = tools.filter(isModifier);
  if (modifiers.length === 0) return undefined;
  if (modifiers.length < tools.length) return "tool names cannot be mixed with +name or -name entries";
  const pattern = modifiers.find((t) => t.includes("*"));
  return pattern ? `+name and -name entries take exact tool names, not patterns: ${pattern}` : undefined;
}

/** Words that are the value of the option before them, by pion's flag kinds (an unknown `--x` takes a following plain word). */
function unknownLongOptions(argv: readonly string[]): { rest: string[]; unknown: Map<string, string | boolean> } {
  const unknown = new Map<string, string | boolean>();
  const rest: string[] = [];
  const known = (tok: string): FlagDef | undefined => {
    const bare = tok.split("=")[0]!;
    for (const [name, def] of Object.entries(FLAGS) as [string, FlagDef][]) if (bare === `--${name}` || (def.short && bare === `-${def.short}`)) return def;
    return undefined;
  };
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === "--") {
      rest.push(...argv.slice(i));
      break;
    }
    const def = known(tok);
    const next = argv[i + 1];
    const plainNext = next !== undefined && !next.startsWith("-") && !next.startsWith("@");
    if (def) {
      rest.push(tok);
      if (!tok.includes("=") && (def.kind === "string" || def.kind === "list" || (def.kind === "optional" && plainNext)) && next !== undefined) rest.push(argv[++i]!);
      continue;
    }
    if (!tok.startsWith("--")) {
      rest.push(tok);
      continue;
    }
    const eq = tok.indexOf("=");
    if (eq !== -1) unknown.set(tok.slice(2, eq), tok.slice(eq + 1));
    else if (plainNext) unknown.set(tok.slice(2), argv[++i]!);
    else unknown.set(tok.slice(2), true);
  }
  return { rest, unknown };
}

export interface Args {
  messages: string[];
  fileArgs: string[];
  unknownFlags: Map<string, boolean | string>;
  diagnostics: { type: "warning" | "error"; message: string }[];
  [field: string]: unknown;
}

export function parseArgs(argv: string[]): Args {
  const { rest, unknown } = unknownLongOptions(argv);
  const out: Args = { messages: [], fileArgs: [], unknownFlags: unknown, diagnostics: [] };
  let values: FlagValues;
  let positionals: string[];
  try {
    ({ values, positionals } = parsePion(rest));
  } catch (err) {
    out.diagnostics.push({ type: "error", message: err instanceof Error ? err.message : String(err) });
    return out;
  }
  const set = values as Record<string, unknown>;
  for (const [flag, field] of SAME) if (set[flag] !== undefined) out[field] = set[flag];
  if (values.mode !== undefined) {
    if (MODES.includes(values.mode)) out.mode = values.mode;
    else out.diagnostics.push({ type: "error", message: `--mode "${values.mode}": the reference's modes are text, json and rpc` });
  }
  if (values.models !== undefined) out.models = commaList(values.models);
  if (values["exclude-tools"] !== undefined) out.excludeTools = commaList(values["exclude-tools"]);
  if (values.tools !== undefined) {
    const tools = commaList(values.tools);
    const error = toolListError(tools);
    if (error) out.diagnostics.push({ type: "error", message: `--tools: ${error}` });
    else out.tools = tools;
  }
  if (values.thinking !== undefined) {
    if (LEVELS.includes(values.thinking)) out.thinking = values.thinking;
    else out.diagnostics.push({ type: "warning", message: `Invalid thinking level "${values.thinking}". Valid values: ${LEVELS.join(", ")}` });
  }
  if (values["no-approve"]) out.projectTrustOverride = false;
  else if (values.approve) out.projectTrustOverride = true;
  // pion's own options, which the reference does not know.
  for (const [flag, value] of Object.entries(set)) if (!SAME_FLAGS.has(flag)) out.unknownFlags.set(flag, Array.isArray(value) ? value[value.length - 1] : (value as string | boolean));
  for (const word of positionals) (word.startsWith("@") ? out.fileArgs : out.messages).push(word.startsWith("@") ? word.slice(1) : word);
  return out;
}
