#!/usr/bin/env bun
import type { ArgsDef, CommandDef } from "citty";
import { loadSettings, pionHome, VERSION } from "./config.ts";
import type { CliOptions } from "./modes/compose.ts";
import { errorMessage } from "./util/errors.ts";

const ARGS = {
  mode: { type: "string", description: "Output mode: rpc, json, print or acp (Agent Client Protocol for editors)", valueHint: "rpc|json|print|acp" },
  print: { type: "boolean", alias: "p", description: "Print mode: run the prompt and print the final text" },
  provider: { type: "string", description: "Provider of the model (anthropic, openai, ...)" },
  model: { type: "string", description: "Model id, provider/id or pattern, with optional :thinking suffix" },
  models: { type: "string", description: "Comma-separated model patterns that cycle_model goes through" },
  thinking: { type: "string", description: "Thinking level: off, minimal, low, medium, high, xhigh, max" },
  name: { type: "string", alias: "n", description: "Session display name" },
  session: { type: "string", description: "Open a session file or id" },
  "session-dir": { type: "string", description: "Directory where sessions are stored" },
  "no-session": { type: "boolean", description: "Keep the session in memory only" },
  continue: { type: "boolean", alias: "c", description: "Continue the most recent session of this folder" },
  "api-key": { type: "string", description: "API key for the selected provider" },
  extension: { type: "string", alias: "e", description: "Load an extension (repeatable)" },
  "no-extensions": { type: "boolean", description: "Do not discover extensions" },
  "no-mcp": { type: "boolean", description: "Connect no MCP server for this run" },
  tools: { type: "string", description: "Tools to enable: names replace, +name adds, -name removes" },
  "system-prompt": { type: "string", description: "Replace the base system prompt" },
  "append-system-prompt": { type: "string", description: "Append text to the system prompt" },
  version: { type: "boolean", alias: "v", description: "Print the version" },
  help: { type: "boolean", alias: "h", description: "Show this help" },
} as const satisfies ArgsDef;

// A plain citty definition: citty itself is loaded only to render --help.
const main: CommandDef = {
  meta: {
    name: "pion",
    version: VERSION,
    description: "A headless coding agent speaking JSON lines over stdio. Browse sessions with: pion sessions list|search <query>|show <id> [--json]",
  },
  args: { ...ARGS, prompts: { type: "positional", required: false, description: "Prompts (json and print modes)" } },
};

class UsageError extends Error {}

/** Strict flag check: unknown flags and missing values are errors (citty alone accepts both). */
function checkArgs(argv: string[]): { values: Record<string, string | boolean>; extensions: string[]; positionals: string[] } {
  const values: Record<string, string | boolean> = {};
  const byName = new Map<string, [string, (typeof ARGS)[keyof typeof ARGS]]>();
  for (const [name, def] of Object.entries(ARGS)) {
    byName.set(`--${name}`, [name, def]);
    if ("alias" in def) byName.set(`-${def.alias}`, [name, def]);
  }
  const extensions: string[] = [];
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!tok.startsWith("-") || tok === "-") {
      positionals.push(tok);
      continue;
    }
    const eq = tok.indexOf("=");
    const flag = eq > 0 ? tok.slice(0, eq) : tok;
    const found = byName.get(flag);
    if (!found) throw new UsageError(`Unknown option: ${flag}`);
    const [name, def] = found;
    if (def.type === "boolean") {
      if (eq > 0) throw new UsageError(`Option ${flag} takes no value`);
      values[name] = true;
      continue;
    }
    let value: string | undefined;
    if (eq > 0) value = tok.slice(eq + 1);
    else {
      value = argv[i + 1];
      if (value === undefined || byName.has(value)) throw new UsageError(`Option ${flag} needs a value`);
      i++;
    }
    if (name === "extension") extensions.push(value);
    values[name] = value;
  }
  return { values, extensions, positionals };
}

/** `pion sessions ...`: its own small flag set. */
async function runSessions(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const args: string[] = [];
  const opts: { json: boolean; limit?: number; filterCwd?: string; sessionDir?: string } = { json: false };
  for (let i = 0; i < rest.length; i++) {
    const tok = rest[i]!;
    if (tok === "--json") opts.json = true;
    else if (tok === "--limit" || tok === "--cwd" || tok === "--session-dir") {
      const val = rest[++i];
      if (val === undefined) {
        process.stderr.write(`pion: Option ${tok} needs a value\n`);
        return 2;
      }
      if (tok === "--limit") opts.limit = Number(val);
      else if (tok === "--cwd") opts.filterCwd = val;
      else opts.sessionDir = val;
    } else if (tok.startsWith("-")) {
      process.stderr.write(`pion: Unknown option: ${tok}\n`);
      return 2;
    } else args.push(tok);
  }
  const { runSessionsCli } = await import("./modes/sessions-cli.ts");
  try {
    return runSessionsCli(sub, args, { home: pionHome(), cwd: process.cwd(), ...opts });
  } catch (err) {
    process.stderr.write(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

async function run(argv: string[]): Promise<number> {
  if (argv[0] === "sessions") return runSessions(argv.slice(1));
  if (argv[0] === "mcp") {
    const { runMcpCli } = await import("./mcp/cli.ts");
    const out = (s: string) => void process.stdout.write(s);
    const err = (s: string) => void process.stderr.write(s);
    return runMcpCli(argv.slice(1), { home: pionHome(), cwd: process.cwd(), env: process.env, projectTrusted: false, out, err });
  }
  let checked: ReturnType<typeof checkArgs>;
  try {
    checked = checkArgs(argv);
  } catch (err) {
    process.stderr.write(`pion: ${errorMessage(err)} (see pion --help)\n`);
    return 2;
  }
  const args: Record<string, string | boolean | undefined> = checked.values;
  if (args.help) {
    const { renderUsage } = await import("citty");
    const usage = await renderUsage(main);
    // Colours for a terminal only: `pion --help | less` or a file gets plain text.
    process.stdout.write(`${process.stdout.isTTY ? usage : Bun.stripANSI(usage)}\n`);
    return 0;
  }
  if (args.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const mode = args.print ? "print" : ((args.mode as string | undefined) ?? "print");
  if (!["rpc", "json", "print", "acp"].includes(mode)) {
    process.stderr.write(`pion: unknown mode "${mode}": expected rpc, json, print or acp\n`);
    return 2;
  }
  const prompts = checked.positionals;
  if (mode === "rpc" && prompts.some((p) => p.startsWith("@"))) {
    process.stderr.write(`pion: @file arguments are not supported in RPC mode; send files in prompt commands instead\n`);
    return 2;
  }
  if (mode === "rpc" && prompts.length > 0) {
    process.stderr.write(`pion: RPC mode takes no prompt arguments; send prompt commands on stdin\n`);
    return 2;
  }
  const opts: CliOptions = {
    cwd: process.cwd(),
    home: pionHome(),
    env: process.env,
    provider: args.provider as string | undefined,
    model: args.model as string | undefined,
    models: args.models as string | undefined,
    thinking: args.thinking as string | undefined,
    name: args.name as string | undefined,
    apiKey: args["api-key"] as string | undefined,
    noSession: args["no-session"] === true,
    session: args.session as string | undefined,
    sessionDir: args["session-dir"] as string | undefined,
    continue: args.continue === true,
    mode: mode as "rpc" | "json" | "print" | "acp",
    extensions: checked.extensions,
    noExtensions: args["no-extensions"] === true,
    noMcp: args["no-mcp"] === true,
    tools: args.tools as string | undefined,
    systemPrompt: args["system-prompt"] as string | undefined,
    appendSystemPrompt: args["append-system-prompt"] as string | undefined,
  };
  if (mode === "acp") {
    if (prompts.length > 0) {
      process.stderr.write(`pion: ACP mode takes no prompt arguments; the editor sends them\n`);
      return 2;
    }
    try {
      return await (await import("./modes/acp.ts")).runAcpMode(opts);
    } catch (err) {
      process.stderr.write(`pion: ${errorMessage(err)}\n`);
      return 1;
    }
  }
  // Loaded after the flags are checked, so --version, --help and usage errors stay instant.
  const { composeSession } = await import("./modes/compose.ts");
  let composed: Awaited<ReturnType<typeof composeSession>>;
  try {
    opts.settings = loadSettings(opts.home, opts.cwd);
    composed = await composeSession(opts);
  } catch (err) {
    process.stderr.write(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
  const code =
    mode === "rpc"
      ? await (await import("./modes/rpc.ts")).runRpcMode(composed)
      : await (await import("./modes/json.ts")).runJsonMode(composed, prompts, mode === "print" ? "print" : "json");
  await composed.close();
  return code;
}

void run(process.argv.slice(2)).then((code) => process.exit(code));
