import { FLAGS, type FlagDef } from "./args.ts";

/** A flag an extension registered, as --help shows it. */
export interface HelpFlag {
  name: string;
  type: "boolean" | "string";
  description?: string;
  extensionPath: string;
}

/**
 * `pion --help`: usage, pion's options, the terminal-only ones accepted for compatibility, then
 * the flags of the extensions this run would load.
 */
export function renderHelp(version: string, color: boolean, extensionFlags: readonly HelpFlag[] = []): string {
  const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[22m` : s);
  const rows = (group: FlagDef["group"]) =>
    (Object.entries(FLAGS) as [string, FlagDef][])
      .filter(([, def]) => def.group === group)
      .map(([name, def]) => [spell(name, def), def.help] as const);
  const main = rows(undefined);
  const compat = rows("compat");
  const extra = extensionFlags.map((f) => [`--${f.name}${f.type === "string" ? " <value>" : ""}`, f.description ?? `Registered by ${f.extensionPath}`] as const);
  const width = Math.max(...[...main, ...compat, ...extra].map(([left]) => left.length)) + 2;
  const table = (list: readonly (readonly [string, string])[]) => list.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join("\n");
  return [
    `pion ${version}: a headless coding agent speaking JSON lines over stdio`,
    "",
    bold("Usage:"),
    "  pion --mode rpc [options]              JSON lines over stdin/stdout",
    '  pion --mode json [options] "prompt"    one prompt, every event as a JSON line',
    '  pion -p [options] "prompt"             print the final answer',
    "  pion --export <session.jsonl> [out]    write a session as HTML",
    "  pion sessions list|search <query>|show <id> [--json]",
    "  pion models [--provider P] [--search TEXT] [--json]   the model catalog",
    "  pion models refresh [--url URL] [--timeout S]         download a newer catalog (models.dev format)",
    "  pion --mode acp [options]              the Agent Client Protocol, for editors",
    "  pion trust [path] | --revoke [path] | --list [--json]  trusted folders",
    "  pion mcp list [--json] | add NAME ... | remove NAME | login NAME | logout NAME   MCP servers",
    "  pion install npm:NAME[@VER]|git:HOST/USER/REPO[@REF]|URL|PATH [-l] | remove SOURCE [-l] | list   pi packages",
    "  pion update --extensions | SOURCE | --models     update pi packages, or the model catalog",
    "  pion auth check [--model M] [--provider P] [--api-key K] [--json]  which credential a run would use (exit 1: none)",
    "  pion sandbox check [--mode read-only|workspace-write] [--json]  can the sandbox start here (exit 3: no)",
    "  pion run PROGRAM.ts|.js [args]         a program written for the reference's SDK, on pion's modules",
    "",
    bold("Options:"),
    table(main),
    "",
    bold("Accepted for compatibility (terminal UI only; no effect in pion's modes):"),
    table(compat),
    "",
    ...(extra.length > 0 ? [bold("Extension flags:"), table(extra), ""] : []),
    "Extensions may register more --options (pi.registerFlag); `--` ends the options.",
  ].join("\n");
}

function spell(name: string, def: FlagDef): string {
  const forms = [...(def.short ? [`-${def.short}`] : []), `--${name}`].join(", ");
  if (def.kind === "boolean") return forms;
  if (def.kind === "optional") return `${forms} [${def.value}]`;
  return `${forms} <${def.value}>`;
}
